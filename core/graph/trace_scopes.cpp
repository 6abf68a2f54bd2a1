// trace_scopes.hpp: refreshed attributes, host nodes and host-state scopes,
// all of which do nothing special when the thread is not tracing.
#include "graph/trace_scopes.hpp"

#include "graph/tracer.hpp"

namespace accel::graph {

RefreshedAttributes::RefreshedAttributes(AttributeRefresh refresh) : tracing_(Tracer::active() != nullptr) {
  if (!tracing_) return;
  saved_ = Tracer::active()->refresh();
  Tracer::active()->set_refresh(std::move(refresh));
}

RefreshedAttributes::~RefreshedAttributes() {
  if (tracing_ && Tracer::active() != nullptr) Tracer::active()->set_refresh(std::move(saved_));
}

void run_host_work(const std::function<void()>& work) {
  Tracer* tracer = Tracer::active();
  if (tracer == nullptr) {
    work();
    return;
  }
  {
    HostStateScope host_state;
    work();
  }
  tracer->add_host_work(work);
}

void undo_on_discard(std::function<void()> undo) {
  if (Tracer* tracer = Tracer::active()) tracer->undo_on_discard(std::move(undo));
}

HostStateScope::HostStateScope() {
  if (Tracer* tracer = Tracer::active()) tracer->enter_host_state();
}

HostStateScope::~HostStateScope() {
  if (Tracer* tracer = Tracer::active()) tracer->leave_host_state();
}

}  // namespace accel::graph
