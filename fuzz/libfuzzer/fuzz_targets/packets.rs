//! The packet decoder: every message kind, compressed and not, from both ends.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    flexio::remote::fuzzing::packets(data);
});
