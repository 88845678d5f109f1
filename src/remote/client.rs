//! `flexio --client=ADDR ... [job files]`.
use crate::signals::Signals;
use flexio_job::Cli;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn main(_cli: &Cli, _sigs: &(Arc<AtomicBool>, Signals)) -> i32 {
    1
}
