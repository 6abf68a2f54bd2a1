// The processes one keras.distribution mesh spans (Keras 3's
// keras.distribution.initialize and list_devices). After initialize, this
// process is one of num_processes(), each with as many devices of a type;
// list_devices() names every process's devices ("/job:worker/replica:0/
// task:T/device:CPU:i", task T being the process id), and a mesh over them
// trains with each process running its own devices' part of the step and
// the collectives crossing processes. The exchange itself (Gloo over TCP)
// comes from core/distribute: distribute::initialize_distribution joins the
// processes of a cluster and calls initialize; docs/sharding.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel::graph { class ProcessExchange; }

namespace accel::keras::distribution {

// Makes this process one of `exchange`'s processes for the meshes built
// from now on (process-wide, as Keras's); null: one process again.
void initialize(std::shared_ptr<graph::ProcessExchange> exchange);
// The exchange initialize set, or null in one process.
std::shared_ptr<graph::ProcessExchange> process_exchange();
int process_id();     // 0 in one process
int num_processes();  // 1 in one process

// Every process's logical devices of `device_type`, process by process (each
// process is taken to have as many as this one, as Keras assumes of hosts):
// this process's own names in one process, "/job:worker/replica:0/task:T/
// device:CPU:i" across processes.
std::vector<std::string> list_devices(std::string_view device_type = "CPU");

}  // namespace accel::keras::distribution
