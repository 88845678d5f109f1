//! The server's connection state machine, fed one client's bytes (plain fio protocol or
//! after a flexio hello), under the default rules in a scratch root, no job run.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("flexio-libfuzzer-root-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch root");
        std::fs::canonicalize(&d).expect("scratch root")
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    flexio::remote::fuzzing::server(data, root());
});
