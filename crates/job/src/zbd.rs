//! The options of `zonemode=zbd` (zoned block devices, emulated on regular files), typed
//! here, in [`JobOptions::zbd`](crate::JobOptions).

/// `zonecapacity`, `max_open_zones`, `job_max_open_zones`, `ignore_zone_limits`,
/// `read_beyond_wp`, `zone_reset_threshold`, `zone_reset_frequency`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZbdOptions {
    /// Bytes of each zone that can be written (0: the zone size).
    pub zonecapacity: u64,
    /// Zones written at a time over all jobs on a device (0: no limit).
    pub max_open_zones: u32,
    /// Zones one job writes at a time (0: no limit of its own).
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    pub read_beyond_wp: bool,
    /// Share of the range with data above which zones are reset periodically.
    pub zone_reset_threshold: f64,
    /// A reset every 1/frequency writes once past the threshold (0: none).
    pub zone_reset_frequency: f64,
}
