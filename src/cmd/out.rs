//! What the subcommands share for their output.

/// Print to stdout without panicking when the reader has gone (`flexio compare ... | head`):
/// a closed pipe ends the output, the command still writes its page and sets its status.
pub fn stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("flexio: cannot write the output: {e}")
        }
        _ => {}
    }
}
