// What every SVG plot shares: the plot frame (margins, title, axis labels),
// the series palette, XML escaping, "nice" linear and logarithmic ticks, and
// a legend. The charts (svg_line_chart, svg_bar_chart, svg_roofline) draw
// their marks inside the frame.
#pragma once

#include <string>
#include <vector>

namespace accel::experiment::svg {

struct Frame {
  int width = 640;
  int height = 320;
  int left = 72;    // room for y tick labels and the y label
  int right = 16;
  int top = 34;     // the title
  int bottom = 52;  // x tick labels and the x label
  double plot_left() const { return left; }
  double plot_right() const { return width - right; }
  double plot_top() const { return top; }
  double plot_bottom() const { return height - bottom; }
};

// A mapping from data to pixels along one axis (linear or log10).
struct Axis {
  double min = 0;
  double max = 1;
  bool log = false;
  double pixel_from = 0;  // pixel of min
  double pixel_to = 1;    // pixel of max
  double to_pixel(double value) const;
};

std::string escape(const std::string& text);
// The color of series `index` (a fixed, colorblind-friendly palette).
const char* series_color(size_t index);

// While one lives (on this thread), a series whose name is a run's name, or
// starts with it ("tpu_v4 (/TPU:0)", "tpu_v4: step"), is drawn in that run's
// color in every chart, so that a run keeps one color from plot to plot
// whichever runs a plot leaves out. report.html holds one over its plots.
class RunColors {
 public:
  explicit RunColors(std::vector<std::string> runs);
  ~RunColors();
  RunColors(const RunColors&) = delete;
  RunColors& operator=(const RunColors&) = delete;

 private:
  std::vector<std::string> previous_;
};

// The color of a series: its run's (RunColors), else the palette's at `index`.
const char* series_color(const std::string& series_name, size_t index);
// About `count` round values covering [min, max].
std::vector<double> linear_ticks(double min, double max, int count = 5);
// Powers of ten covering [min, max] (both > 0).
std::vector<double> log_ticks(double min, double max);
// "0.5", "1.2k", "3M", "1e-05": short tick text.
std::string tick_label(double value);
// Widens [min, max] to round tick values (and a non-empty range).
void nice_range(double& min, double& max);

// <svg ...> with the title, the frame's background, and role="img" + aria-label.
std::string open_svg(const Frame& frame, const std::string& id, const std::string& title);
// Axes with their ticks and labels; either may be absent (bar charts draw their own categories).
std::string draw_x_axis(const Frame& frame, const Axis& axis, const std::vector<double>& ticks, const std::string& label);
std::string draw_y_axis(const Frame& frame, const Axis& axis, const std::vector<double>& ticks, const std::string& label);
// One row of colored swatches with names, under the title.
std::string draw_legend(const Frame& frame, const std::vector<std::string>& names);
// A plot with nothing to show: the frame and a sentence saying why.
std::string empty_plot(const Frame& frame, const std::string& id, const std::string& title, const std::string& why);

}  // namespace accel::experiment::svg
