#include "svg_bar_chart.hpp"

#include "svg_canvas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace accel::experiment::svg {

std::string bar_chart_svg(const BarChart& chart) {
  const size_t series_count = std::max<size_t>(1, chart.series.size());
  const double bar_height = 12;
  const double group_height = bar_height * static_cast<double>(series_count) + 10;
  Frame frame;
  size_t longest_label = 0;
  for (const BarGroup& group : chart.groups) longest_label = std::max(longest_label, group.label.size());
  frame.left = static_cast<int>(std::clamp<size_t>(longest_label * 6 + 16, 80, 260));  // ~6 px per character
  frame.width = 640 + std::max(0, frame.left - 150);
  frame.right = 70;
  frame.top = 34 + (chart.series.size() > 1 ? 18 : 0);
  frame.height = static_cast<int>(frame.top + frame.bottom + group_height * static_cast<double>(chart.groups.size()) + 4);

  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (const BarGroup& group : chart.groups) {
    for (const auto& value : group.values) {
      if (!value || !std::isfinite(*value) || (chart.log_scale && *value <= 0)) continue;
      low = std::min(low, *value);
      high = std::max(high, *value);
    }
  }
  if (chart.groups.empty() || !std::isfinite(low)) {
    frame.height = 120;
    return empty_plot(frame, chart.id, chart.title, "no data for this plot");
  }
  Axis axis{0, high, chart.log_scale, frame.plot_left(), frame.plot_right()};
  std::vector<double> ticks;
  if (chart.log_scale) {
    axis.min = std::pow(10.0, std::floor(std::log10(low)));
    axis.max = std::pow(10.0, std::ceil(std::log10(high)));
    if (axis.max <= axis.min) axis.max = axis.min * 10;
    ticks = log_ticks(axis.min, axis.max);
  } else {
    double min = 0, max = high;
    nice_range(min, max);
    axis.min = 0;
    axis.max = max;
    ticks = linear_ticks(0, max);
  }
  std::string out = open_svg(frame, chart.id, chart.title);
  out += draw_x_axis(frame, axis, ticks, chart.value_label);
  if (chart.series.size() > 1) {
    Frame legend_frame = frame;
    legend_frame.top = 22;
    out += draw_legend(legend_frame, chart.series);
  }
  double y = frame.plot_top() + 4;
  for (const BarGroup& group : chart.groups) {
    // A label longer than the margin holds is cut at its end, not its start
    // (which would hide the op's name), and shown whole on hover.
    const size_t room = static_cast<size_t>(std::max(8, (frame.left - 16) / 6));
    const std::string shown = group.label.size() <= room ? group.label : group.label.substr(0, room - 1) + "\u2026";
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\"><title>{}</title>{}</text>",
                       frame.plot_left() - 6, y + group_height / 2 - 2, escape(group.label), escape(shown));
    for (size_t index = 0; index < group.values.size(); ++index) {
      const auto& value = group.values[index];
      const double bar_y = y + bar_height * static_cast<double>(index);
      if (!value || !std::isfinite(*value) || (chart.log_scale && *value <= 0)) continue;
      const double start = chart.log_scale ? frame.plot_left() : axis.to_pixel(0);
      const double width = std::max(1.0, axis.to_pixel(*value) - start);
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{}: {}</title></rect><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\">{}</text>",
          start, bar_y, width, bar_height - 2,
          series_color(index < chart.series.size() ? chart.series[index] : std::string(), index), escape(group.label),
          escape(tick_label(*value)), start + width + 3, bar_y + bar_height - 4, escape(tick_label(*value)));
    }
    y += group_height;
  }
  return out + "</svg>";
}

}  // namespace accel::experiment::svg
