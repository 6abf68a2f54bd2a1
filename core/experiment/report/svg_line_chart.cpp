#include "svg_line_chart.hpp"

#include "svg_canvas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace accel::experiment::svg {
namespace {

struct Point {
  double x, y;
};

// At most three points per pixel column: the first, the lowest, the highest.
std::vector<Point> reduced_points(const LineSeries& series, const Axis& x_axis) {
  std::vector<Point> points;
  const size_t count = std::min(series.x.size(), series.y.size());
  points.reserve(std::min<size_t>(count, 3000));
  long column = std::numeric_limits<long>::min();
  size_t column_begin = 0;
  for (size_t index = 0; index < count; ++index) {
    if (!std::isfinite(series.y[index])) continue;
    const long pixel = std::lround(x_axis.to_pixel(series.x[index]));
    if (pixel != column) {
      column = pixel;
      column_begin = points.size();
      points.push_back({series.x[index], series.y[index]});
      continue;
    }
    // Same column: keep the column's extremes (at most 3 points).
    Point candidate{series.x[index], series.y[index]};
    if (points.size() - column_begin < 3) {
      points.push_back(candidate);
    } else {
      Point& low = points[column_begin + 1].y <= points[column_begin + 2].y ? points[column_begin + 1] : points[column_begin + 2];
      Point& high = &low == &points[column_begin + 1] ? points[column_begin + 2] : points[column_begin + 1];
      if (candidate.y < low.y) low = candidate;
      if (candidate.y > high.y) high = candidate;
    }
  }
  return points;
}

}  // namespace

std::string line_chart_svg(const LineChart& chart) {
  Frame frame;
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
  for (const LineSeries& series : chart.series) {
    for (size_t index = 0; index < std::min(series.x.size(), series.y.size()); ++index) {
      const double y = series.y[index];
      if (!std::isfinite(y) || (chart.log_y && y <= 0)) continue;
      x_min = std::min(x_min, series.x[index]);
      x_max = std::max(x_max, series.x[index]);
      y_min = std::min(y_min, y);
      y_max = std::max(y_max, y);
    }
  }
  if (!std::isfinite(x_min)) return empty_plot(frame, chart.id, chart.title, "no data for this plot");

  Axis x_axis{x_min, x_max, false, frame.plot_left(), frame.plot_right()};
  if (x_max <= x_min) {
    x_axis.min -= 1;
    x_axis.max += 1;
  }
  Axis y_axis{0, 1, chart.log_y, frame.plot_bottom(), frame.plot_top() + 18};  // room for the legend
  std::vector<double> y_ticks;
  if (chart.log_y) {
    y_axis.min = std::pow(10.0, std::floor(std::log10(y_min)));
    y_axis.max = std::pow(10.0, std::ceil(std::log10(y_max)));
    if (y_axis.max <= y_axis.min) y_axis.max = y_axis.min * 10;
    y_ticks = log_ticks(y_axis.min, y_axis.max);
  } else {
    double low = std::min(0.0, y_min), high = y_max;
    nice_range(low, high);
    y_axis.min = low;
    y_axis.max = high;
    y_ticks = linear_ticks(low, high);
  }
  std::string out = open_svg(frame, chart.id, chart.title);
  out += draw_x_axis(frame, x_axis, linear_ticks(x_axis.min, x_axis.max, 6), chart.x_label);
  out += draw_y_axis(frame, y_axis, y_ticks, chart.y_label);
  std::vector<std::string> names;
  for (size_t index = 0; index < chart.series.size(); ++index) {
    const LineSeries& series = chart.series[index];
    names.push_back(series.name);
    const std::vector<Point> points = reduced_points(series, x_axis);
    if (points.empty()) continue;
    std::string path;
    path.reserve(points.size() * 16);
    for (const Point& point : points) {
      if (chart.log_y && point.y <= 0) continue;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x_axis.to_pixel(point.x), y_axis.to_pixel(point.y));
    }
    out += fmt::format("<path class=\"series\" data-series=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"/>",
                       escape(series.name), path, series_color(series.name, index));
    if (series.markers || points.size() == 1) {
      for (const Point& point : points) {
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", x_axis.to_pixel(point.x),
                           y_axis.to_pixel(point.y), series_color(series.name, index));
      }
    }
  }
  out += draw_legend(frame, names);
  return out + "</svg>";
}

}  // namespace accel::experiment::svg
