//! flexio's workload generators: pure, deterministic functions of the job options and a
//! seed. They decide which file, direction, offset and length come next and what a write
//! buffer holds; they never touch the system.

pub mod bitmap;
pub mod dist;
pub mod fileservice;
pub mod fill;
pub mod gen;
pub mod rate;
pub mod rng;
pub mod sprandom;
pub mod zbd;

pub use gen::{BsPolicy, FileSelect, Generator, NextIo, NoZones, Region, Spec, Zoned};
pub use rng::Taus88;
