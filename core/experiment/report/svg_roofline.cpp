#include "svg_roofline.hpp"

#include "svg_canvas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace accel::experiment::svg {

std::string roofline_svg(const RooflineChart& chart) {
  Frame frame;
  frame.height = 380;
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0;
  double y_min = std::numeric_limits<double>::infinity(), y_max = 0;
  for (const RooflinePoint& point : chart.points) {
    if (!(point.intensity > 0) || !(point.flops_per_second > 0)) continue;
    x_min = std::min(x_min, point.intensity);
    x_max = std::max(x_max, point.intensity);
    y_min = std::min(y_min, point.flops_per_second);
    y_max = std::max(y_max, point.flops_per_second);
  }
  for (const Roof& roof : chart.roofs) {
    if (!(roof.peak_flops_per_second > 0) || !(roof.bandwidth_bytes_per_second > 0)) continue;  // unknown
    y_max = std::max(y_max, roof.peak_flops_per_second);
    const double ridge = roof.peak_flops_per_second / roof.bandwidth_bytes_per_second;
    x_min = std::min(x_min, ridge / 10);
    x_max = std::max(x_max, ridge * 10);
  }
  if (!std::isfinite(x_min) || !std::isfinite(y_min) || x_max <= 0 || y_max <= 0) {
    return empty_plot(frame, chart.id, chart.title, "no op with both FLOPs and bytes was profiled");
  }
  Axis x_axis{std::pow(10.0, std::floor(std::log10(x_min))), std::pow(10.0, std::ceil(std::log10(x_max))), true,
              frame.plot_left(), frame.plot_right()};
  Axis y_axis{std::pow(10.0, std::floor(std::log10(y_min))), std::pow(10.0, std::ceil(std::log10(y_max * 1.5))), true,
              frame.plot_bottom(), frame.plot_top() + 18};
  std::string out = open_svg(frame, chart.id, chart.title);
  out += draw_x_axis(frame, x_axis, log_ticks(x_axis.min, x_axis.max), "arithmetic intensity (FLOP/byte)");
  out += draw_y_axis(frame, y_axis, log_ticks(y_axis.min, y_axis.max), "attained FLOP/s");
  std::vector<std::string> names;
  for (size_t index = 0; index < chart.roofs.size(); ++index) {
    const Roof& roof = chart.roofs[index];
    names.push_back(roof.name);
    if (!(roof.peak_flops_per_second > 0) || !(roof.bandwidth_bytes_per_second > 0)) continue;  // unknown roof
    // Memory slope up to the ridge, then flat at the peak.
    const double ridge = roof.peak_flops_per_second / roof.bandwidth_bytes_per_second;
    const double start_x = x_axis.min;
    const double start_y = std::max(y_axis.min, roof.bandwidth_bytes_per_second * start_x);
    const double slope_start_x = start_y / roof.bandwidth_bytes_per_second;
    out += fmt::format(
        "<path class=\"roof\" data-roof=\"{}\" d=\"M{:.1f},{:.1f} L{:.1f},{:.1f} L{:.1f},{:.1f}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>",
        escape(roof.name), x_axis.to_pixel(slope_start_x), y_axis.to_pixel(start_y), x_axis.to_pixel(ridge),
        y_axis.to_pixel(roof.peak_flops_per_second), x_axis.to_pixel(x_axis.max),
        y_axis.to_pixel(roof.peak_flops_per_second), series_color(roof.name, index));
  }
  // Labels that would overlap one already drawn are left out (the point keeps
  // its name on hover): crowded ops otherwise print over each other.
  struct Box {
    double left, top, right, bottom;
  };
  std::vector<Box> labels;
  for (const RooflinePoint& point : chart.points) {
    if (!(point.intensity > 0) || !(point.flops_per_second > 0)) continue;
    const double x = x_axis.to_pixel(point.intensity), y = y_axis.to_pixel(point.flops_per_second);
    out += fmt::format(
        "<circle class=\"op\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.8\"><title>{}: {} FLOP/byte, "
        "{} FLOP/s</title></circle>",
        x, y, series_color(chart.roofs[point.roof].name, point.roof), escape(point.label), tick_label(point.intensity),
        tick_label(point.flops_per_second));
    const Box box{x + 5, y - 12, x + 5 + 5.0 * static_cast<double>(point.label.size()), y};  // font-size 9: ~5 px a character
    const bool overlaps = std::any_of(labels.begin(), labels.end(), [&](const Box& other) {
      return box.left < other.right && other.left < box.right && box.top < other.bottom && other.top < box.bottom;
    });
    if (overlaps) continue;
    labels.push_back(box);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"#444\">{}</text>", x + 5, y - 3,
                       escape(point.label));
  }
  out += draw_legend(frame, names);
  return out + "</svg>";
}

}  // namespace accel::experiment::svg
