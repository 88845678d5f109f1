//! flexio's command: everything happens in the library (`flexio::app::run`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = flexio::app::run(args);
    std::process::exit(code);
}
