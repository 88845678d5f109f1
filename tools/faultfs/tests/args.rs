//! flexio-faultfs refuses bad command lines with a usage message (and its binary is built
//! for the workspace's tests, which mount it to inject faults into flexio's runs).

use std::process::Command;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flexio-faultfs"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_arguments_get_usage() {
    let (code, err) = run(&[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no mount point") && err.contains("usage:"),
        "{err}"
    );
    let (code, err) = run(&["/mnt/x", "--bogus", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown argument --bogus"), "{err}");
    let (code, err) = run(&["/mnt/x", "--eio-read", "12"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected 2"), "{err}");
    let (code, err) = run(&["/mnt/x", "--size", "8g"]);
    assert_eq!(code, 2);
    assert!(err.contains("limited to 4 GiB"), "{err}");
}
