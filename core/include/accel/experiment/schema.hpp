// The experiment schema as data: every key with its type, range, default,
// meaning and an example. The validator walks these tables, and
// docs/yaml-reference.md is rendered from them (render_schema_reference), so
// the two cannot disagree.
#pragma once

#include <accel/experiment/source_node.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace accel::experiment {

enum class ValueForm {
  kText,        // any scalar
  kFileName,    // a scalar usable as one file or folder name: no '/', not "." or "..", no control characters
  kChoice,      // one of `choices`
  kBool,        // true / false
  kInteger,     // whole number in [min, max]
  kNumber,      // real number in [min, max] (or (min, max] with min_exclusive)
  kByteSize,    // "512 MiB", "2 GiB"
  kIntOrShape,  // 3 or [3, 3]: one positive integer or a list of them (min_items..max_items)
  kShape,       // [28, 28, 1]: a list of integers >= min (1 unless set; reshape's target_shape allows -1)
  kDeviceName,  // "/GPU:0", "/job:localhost/replica:0/task:0/device:CPU:0", or a type: "GPU"
  kArraySize,   // "128x128": rows x columns of a systolic array
  kIntOrChoice, // an integer in [min, max] or one of `choices` ("autotune", "true", ...)
  kBoolOrText,  // true / false or a text (a path)
  kMap,         // a mapping with `fields`; a scalar X reads as {shorthand: X} when shorthand is set
  kList,        // a list of `item` (min_items.. entries)
  kCall,        // a named Keras object: "adam" or {adam: {learning_rate: 0.01}} (`calls`)
  kNumberOrCall,// a number in [min, max], or a mapping naming a Keras object of `calls` (a learning rate or a schedule)
  kFreeMap,     // any nested mapping of scalars (checked elsewhere, e.g. against a TPU preset)
  kScalarList,  // a list of scalars (sweep values)
  kNames,       // a name or a list of names (min_items..max_items): a graph layer's inputs, the graph's outputs
  kNamedMap,    // a mapping of names the file chooses to values of `item`: the graph's inputs
  kMargins2D,   // ZeroPadding2D / Cropping2D margins: n, [rows, columns] or [[top, bottom], [left, right]], each >= 0
};

// The longest experiment or run name (kFileName), in bytes: a file name's
// limit is 255, and the name is joined with suffixes.
inline constexpr std::size_t kMaxFileNameBytes = 128;

struct ValueSpec;
using SpecPtr = std::shared_ptr<const ValueSpec>;

struct Field {
  std::string key;
  SpecPtr spec;
  bool required = false;
  std::string default_text;  // as documented; used as the value when it parses under `spec`
  std::string doc;
  std::string example;       // YAML text of the value
};

// One named object of a kCall: a layer, optimizer, loss, metric, callback,
// strategy or cluster resolver, with its keyword arguments.
struct Call {
  std::string name;
  std::vector<Field> arguments;
  std::string doc;
};

struct ValueSpec {
  ValueForm form = ValueForm::kText;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  std::size_t min_items = 0;
  std::size_t max_items = std::numeric_limits<std::size_t>::max();
  std::vector<std::string> choices;
  std::vector<Field> fields;
  std::string shorthand;
  // kMap: keys of which exactly one is written (model: layers or graph).
  // Two is an error wherever written; none only in a resolved run. Merging
  // one into a compare run replaces the other.
  std::vector<std::string> one_of;
  SpecPtr item;
  std::string call_kind;  // "layer", "optimizer", ...
  std::vector<Call> calls;

  const Field* field(const std::string& key) const;
  const Call* call(const std::string& name) const;
};

// What a value of `spec` looks like, for messages and the reference:
// "an integer >= 1", "one of 'valid', 'same'", ...
std::string describe_expected(const ValueSpec& spec);

// The whole document.
const ValueSpec& experiment_spec();
// One run: the document's run keys (plugins ... output), none of them required.
const ValueSpec& run_spec();

// docs/yaml-reference.md.
std::string render_schema_reference();

}  // namespace accel::experiment
