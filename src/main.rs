//! flexio: a flexible I/O tester that runs fio job files and prints fio-compatible output.
//! See ARCHITECTURE.md for the map of the code.

mod app;
mod blockdev;
mod clock;
mod defaults;
mod diskstats;
mod files;
mod logs;
mod out;
mod plan;
mod progress;
mod signals;
mod status;
mod steady;
mod worker;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = app::run(args);
    std::process::exit(code);
}
