// Dataset::cache. In memory: the first pass that reaches the end publishes
// its elements; later passes replay them. In a file: the first complete pass
// writes "<file>.partial.<pid>.<n>" and renames it to <file> at the end, so an
// interrupted pass leaves no cache behind; later passes read the file.
//
// File layout: the 16-byte magic below, then per element the byte 0x01 and
// the element (element_codec.hpp), then the byte 0xFF and a u64 element count.
#include <accel/data/data_error.hpp>
#include <accel/error.hpp>

#include "element_codec.hpp"
#include "transformations.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unistd.h>

namespace accel::data::detail {
namespace {

constexpr char kCacheMagic[16] = {'A', 'C', 'C', 'E', 'L', '-', 'C', 'A', 'C', 'H', 'E', '-', 'v', '1', '\n', '\0'};
constexpr uint8_t kElementTag = 0x01;
constexpr uint8_t kEndTag = 0xFF;

// Replaying from the input and dropping what was already seen: how a read
// position is restored when the cache itself is not there (a fresh process).
void skip_elements(IteratorNode& input, int64_t count) {
  for (int64_t i = 0; i < count && input.next(); ++i) {
  }
}

// ---------------------------------------------------------------- memory

struct MemoryCacheStore {
  std::mutex mutex;
  std::shared_ptr<const std::vector<Element>> complete;
};

class MemoryCacheIterator : public IteratorNode {
 public:
  MemoryCacheIterator(NodePtr input_node, IteratorContext context, std::shared_ptr<MemoryCacheStore> store)
      : input_node_(std::move(input_node)), context_(std::move(context)), store_(std::move(store)) {
    std::lock_guard lock(store_->mutex);
    cached_ = store_->complete;
    if (!cached_) {
      input_ = input_node_->make_iterator(context_);
      recording_ = true;
    }
  }

  std::optional<Element> next() override {
    if (cached_) {
      if (index_ >= static_cast<int64_t>(cached_->size())) return std::nullopt;
      return (*cached_)[static_cast<size_t>(index_++)];
    }
    auto element = input_->next();
    if (element) ++index_;
    if (element && recording_) recorded_.push_back(*element);
    if (!element && recording_) publish();
    return element;
  }

  void save(nlohmann::json& state) override {
    state["index"] = index_;
    if (input_) input_->save(state["input"]);
  }
  void restore(const nlohmann::json& state) override {
    index_ = state.at("index").get<int64_t>();
    recorded_.clear();
    recording_ = false;  // a resumed pass has not seen the elements before it
    if (state.contains("input")) {
      cached_.reset();
      if (!input_) input_ = input_node_->make_iterator(context_);
      input_->restore(state.at("input"));
    } else if (!cached_) {
      input_ = input_node_->make_iterator(context_);
      skip_elements(*input_, index_);
    }
  }
  void report(std::vector<NodeReport>& reports) const override {
    if (input_) input_->report(reports);
  }

 private:
  void publish() {
    recording_ = false;
    std::lock_guard lock(store_->mutex);
    if (!store_->complete) store_->complete = std::make_shared<const std::vector<Element>>(std::move(recorded_));
    recorded_.clear();
  }

  NodePtr input_node_;
  IteratorContext context_;
  std::shared_ptr<MemoryCacheStore> store_;
  std::shared_ptr<const std::vector<Element>> cached_;
  std::unique_ptr<IteratorNode> input_;
  std::vector<Element> recorded_;
  bool recording_ = false;
  int64_t index_ = 0;
};

class MemoryCacheNode : public UnaryDatasetNode {
 public:
  explicit MemoryCacheNode(NodePtr input)
      : UnaryDatasetNode(std::move(input)), store_(std::make_shared<MemoryCacheStore>()) {}
  std::unique_ptr<IteratorNode> make_iterator(const IteratorContext& context) const override {
    return std::make_unique<MemoryCacheIterator>(input(), context, store_);
  }
  std::string describe() const override { return input()->describe() + ".cache()"; }

 private:
  std::shared_ptr<MemoryCacheStore> store_;
};

// ---------------------------------------------------------------- file

std::string unique_partial_path(const std::string& filename) {
  static std::atomic<uint64_t> counter{0};
  return filename + ".partial." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

class FileCacheWriter {
 public:
  explicit FileCacheWriter(std::string filename)
      : filename_(std::move(filename)), partial_path_(unique_partial_path(filename_)), stream_(partial_path_, std::ios::binary) {
    if (!stream_) throw NotFoundError("cache: cannot create '" + partial_path_ + "' (does the directory exist?)");
    stream_.write(kCacheMagic, sizeof(kCacheMagic));
  }
  ~FileCacheWriter() { abandon(); }

  void append(const Element& element) {
    buffer_.clear();
    buffer_.push_back(kElementTag);
    encode_element(element, buffer_);
    stream_.write(reinterpret_cast<const char*>(buffer_.data()), static_cast<std::streamsize>(buffer_.size()));
    ++count_;
  }
  // Seals the file and moves it into place.
  void finish() {
    stream_.put(static_cast<char>(kEndTag));
    stream_.write(reinterpret_cast<const char*>(&count_), sizeof(count_));
    stream_.close();
    if (!stream_) throw InternalError("cache: writing '" + partial_path_ + "' failed (disk full?)");
    std::error_code error;
    std::filesystem::rename(partial_path_, filename_, error);
    if (error) throw InternalError("cache: cannot rename '" + partial_path_ + "' to '" + filename_ + "': " + error.message());
    finished_ = true;
  }
  void abandon() {
    if (finished_) return;
    finished_ = true;
    stream_.close();
    std::error_code ignored;
    std::filesystem::remove(partial_path_, ignored);
  }

 private:
  std::string filename_;
  std::string partial_path_;
  std::ofstream stream_;
  std::vector<uint8_t> buffer_;
  uint64_t count_ = 0;
  bool finished_ = false;
};

class FileCacheReader {
 public:
  explicit FileCacheReader(const std::string& filename) : reader_(filename) {
    char magic[sizeof(kCacheMagic)];
    reader_.read(magic, sizeof(magic), "cache file magic");
    if (std::memcmp(magic, kCacheMagic, sizeof(magic)) != 0) {
      throw DataError(filename, "byte 0", "not an accel dataset cache file (bad magic)");
    }
  }
  std::optional<Element> next() {
    if (ended_) return std::nullopt;
    auto tag = reader_.read_value<uint8_t>("record tag");
    if (tag == kEndTag) {
      auto count = reader_.read_value<uint64_t>("element count");
      if (count != read_) reader_.fail("the cache says it holds " + std::to_string(count) + " elements, it held " + std::to_string(read_));
      ended_ = true;
      return std::nullopt;
    }
    if (tag != kElementTag) reader_.fail("unknown record tag " + std::to_string(tag));
    ++read_;
    return decode_element(reader_);
  }

 private:
  FileElementReader reader_;
  uint64_t read_ = 0;
  bool ended_ = false;
};

class FileCacheIterator : public IteratorNode {
 public:
  FileCacheIterator(NodePtr input_node, IteratorContext context, std::string filename)
      : input_node_(std::move(input_node)), context_(std::move(context)), filename_(std::move(filename)) {
    if (std::filesystem::exists(filename_)) {
      reader_ = std::make_unique<FileCacheReader>(filename_);
    } else {
      input_ = input_node_->make_iterator(context_);
      writer_ = std::make_unique<FileCacheWriter>(filename_);
    }
  }

  std::optional<Element> next() override {
    if (reader_) {
      auto element = reader_->next();
      if (element) ++index_;
      return element;
    }
    auto element = input_->next();
    if (element) {
      ++index_;
      if (writer_) writer_->append(*element);
    } else if (writer_) {
      writer_->finish();
      writer_.reset();
    }
    return element;
  }

  void save(nlohmann::json& state) override {
    state["index"] = index_;
    if (input_) input_->save(state["input"]);
  }
  void restore(const nlohmann::json& state) override {
    index_ = state.at("index").get<int64_t>();
    writer_.reset();  // a resumed pass has not seen the elements before it: write nothing
    if (state.contains("input")) {
      reader_.reset();
      if (!input_) input_ = input_node_->make_iterator(context_);
      input_->restore(state.at("input"));
      return;
    }
    input_.reset();
    if (std::filesystem::exists(filename_)) {
      reader_ = std::make_unique<FileCacheReader>(filename_);
      for (int64_t i = 0; i < index_ && reader_->next(); ++i) {
      }
    } else {
      reader_.reset();
      input_ = input_node_->make_iterator(context_);
      skip_elements(*input_, index_);
    }
  }
  void report(std::vector<NodeReport>& reports) const override {
    if (input_) input_->report(reports);
  }

 private:
  NodePtr input_node_;
  IteratorContext context_;
  std::string filename_;
  std::unique_ptr<IteratorNode> input_;
  std::unique_ptr<FileCacheWriter> writer_;
  std::unique_ptr<FileCacheReader> reader_;
  int64_t index_ = 0;
};

class FileCacheNode : public UnaryDatasetNode {
 public:
  FileCacheNode(NodePtr input, std::string filename) : UnaryDatasetNode(std::move(input)), filename_(std::move(filename)) {}
  std::unique_ptr<IteratorNode> make_iterator(const IteratorContext& context) const override {
    return std::make_unique<FileCacheIterator>(input(), context, filename_);
  }
  std::string describe() const override { return input()->describe() + ".cache(\"" + filename_ + "\")"; }

 private:
  std::string filename_;
};

}  // namespace

NodePtr make_memory_cache_node(NodePtr input) { return std::make_shared<MemoryCacheNode>(std::move(input)); }

NodePtr make_file_cache_node(NodePtr input, std::string filename) {
  return std::make_shared<FileCacheNode>(std::move(input), std::move(filename));
}

}  // namespace accel::data::detail
