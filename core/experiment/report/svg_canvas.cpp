#include "svg_canvas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace accel::experiment::svg {

double Axis::to_pixel(double value) const {
  double from = min, to = max, at = value;
  if (log) {
    from = std::log10(min);
    to = std::log10(max);
    at = std::log10(std::max(value, min * 1e-3));
  }
  const double fraction = to == from ? 0.5 : (at - from) / (to - from);
  return pixel_from + fraction * (pixel_to - pixel_from);
}

std::string escape(const std::string& text) {
  std::string result;
  result.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': result += "&amp;"; break;
      case '<': result += "&lt;"; break;
      case '>': result += "&gt;"; break;
      case '"': result += "&quot;"; break;
      default: result += c;
    }
  }
  return result;
}

const char* series_color(size_t index) {
  static const char* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"};
  return palette[index % 8];
}

namespace {
thread_local std::vector<std::string> run_order;
}  // namespace

RunColors::RunColors(std::vector<std::string> runs) : previous_(std::move(run_order)) { run_order = std::move(runs); }

RunColors::~RunColors() { run_order = std::move(previous_); }

const char* series_color(const std::string& series_name, size_t index) {
  size_t best = run_order.size(), best_length = 0;
  for (size_t run = 0; run < run_order.size(); ++run) {
    const std::string& name = run_order[run];
    const bool named = series_name == name ||
                       (series_name.starts_with(name) && (series_name[name.size()] == ' ' || series_name[name.size()] == ':'));
    if (named && name.size() > best_length) {
      best = run;
      best_length = name.size();
    }
  }
  return series_color(best < run_order.size() ? best : index);
}

std::vector<double> linear_ticks(double min, double max, int count) {
  std::vector<double> ticks;
  if (!(max > min)) return {min};
  const double raw = (max - min) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  for (double tick = std::ceil(min / step - 1e-9) * step; tick <= max + step * 1e-9; tick += step) {
    ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0.0 : tick);
  }
  return ticks;
}

std::vector<double> log_ticks(double min, double max) {
  std::vector<double> ticks;
  for (double exponent = std::floor(std::log10(min)); exponent <= std::ceil(std::log10(max)); ++exponent) {
    const double tick = std::pow(10.0, exponent);
    if (tick >= min * 0.999 && tick <= max * 1.001) ticks.push_back(tick);
  }
  return ticks;
}

std::string tick_label(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return "0";
  if (magnitude >= 1e15 || magnitude < 1e-3) return fmt::format("{:.0e}", value);
  const char* suffixes[] = {"", "k", "M", "G", "T"};
  int suffix = 0;
  while (std::fabs(value) >= 1000 && suffix < 4) {
    value /= 1000;
    ++suffix;
  }
  return fmt::format("{:.3g}{}", value, suffixes[suffix]);
}

void nice_range(double& min, double& max) {
  if (!std::isfinite(min) || !std::isfinite(max)) {
    min = 0;
    max = 1;
  }
  if (max <= min) {
    const double pad = min == 0 ? 1.0 : std::fabs(min) * 0.1;
    min -= pad;
    max += pad;
  }
  const std::vector<double> ticks = linear_ticks(min, max);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : (max - min);
  min = std::floor(min / step + 1e-9) * step;
  max = std::ceil(max / step - 1e-9) * step;
}

std::string open_svg(const Frame& frame, const std::string& id, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}-svg\" class=\"chart\" width=\"{1}\" height=\"{2}\" "
      "viewBox=\"0 0 {1} {2}\" role=\"img\" aria-label=\"{3}\" font-family=\"sans-serif\" font-size=\"11\">"
      "<title>{3}</title><rect x=\"0\" y=\"0\" width=\"{1}\" height=\"{2}\" fill=\"#ffffff\"/>"
      "<text x=\"{4}\" y=\"16\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">{3}</text>",
      id, frame.width, frame.height, escape(title), frame.width / 2);
}

std::string draw_x_axis(const Frame& frame, const Axis& axis, const std::vector<double>& ticks, const std::string& label) {
  std::string out = fmt::format("<g class=\"x-axis\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>",
                                frame.plot_left(), frame.plot_bottom(), frame.plot_right(), frame.plot_bottom());
  for (double tick : ticks) {
    const double x = axis.to_pixel(tick);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
        x, frame.plot_top(), frame.plot_bottom(), frame.plot_bottom() + 14, escape(tick_label(tick)));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
                     (frame.plot_left() + frame.plot_right()) / 2, frame.height - 12, escape(label));
  return out;
}

std::string draw_y_axis(const Frame& frame, const Axis& axis, const std::vector<double>& ticks, const std::string& label) {
  std::string out = fmt::format("<g class=\"y-axis\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>",
                                frame.plot_left(), frame.plot_top(), frame.plot_left(), frame.plot_bottom());
  for (double tick : ticks) {
    const double y = axis.to_pixel(tick);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
        frame.plot_left(), y, frame.plot_right(), frame.plot_left() - 4, y + 4, escape(tick_label(tick)));
  }
  const double middle = (frame.plot_top() + frame.plot_bottom()) / 2;
  out += fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text></g>",
                     middle, escape(label));
  return out;
}

std::string draw_legend(const Frame& frame, const std::vector<std::string>& names) {
  std::string out = "<g class=\"legend\">";
  double x = frame.plot_left() + 6;
  for (size_t index = 0; index < names.size(); ++index) {
    out += fmt::format(
        "<rect x=\"{0:.0f}\" y=\"{1}\" width=\"10\" height=\"10\" fill=\"{2}\"/>"
        "<text x=\"{3:.0f}\" y=\"{4}\">{5}</text>",
        x, frame.plot_top() + 4, series_color(names[index], index), x + 14, frame.plot_top() + 13, escape(names[index]));
    x += 24 + 6.5 * static_cast<double>(names[index].size());
  }
  return out + "</g>";
}

std::string empty_plot(const Frame& frame, const std::string& id, const std::string& title, const std::string& why) {
  return open_svg(frame, id, title) +
         fmt::format("<text class=\"no-data\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">{}</text></svg>",
                     frame.width / 2, frame.height / 2, escape(why));
}

}  // namespace accel::experiment::svg
