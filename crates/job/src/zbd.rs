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
    /// Values given in zones (`size=2z`, `offset=1z`): size, io_size, offset,
    /// offset_increment, zoneskip, in that order; the loader turns them into bytes once the
    /// job's zonesize is known ([`ZbdOptions::in_zones`]).
    pub zone_units: [Option<u64>; 5],
}

/// The options that take a value in zones, in the order of `ZbdOptions::zone_units`.
pub const ZONE_UNIT_OPTIONS: [&str; 5] =
    ["size", "io_size", "offset", "offset_increment", "zoneskip"];

/// `Nz`: a number of zones (fio's `_ZONE` values), else `None`.
pub fn zones_of(v: &str) -> Option<u64> {
    let n = v.strip_suffix('z')?;
    n.parse().ok()
}

impl ZbdOptions {
    /// The value in zones given to option `i` of [`ZONE_UNIT_OPTIONS`] (or none: `v` is
    /// not in zones), as its setter records it.
    pub fn note_zones(&mut self, i: usize, v: &str) -> Option<u64> {
        self.zone_units[i] = zones_of(v);
        self.zone_units[i]
    }
}

#[cfg(test)]
mod zone_unit_tests {
    use super::*;

    #[test]
    fn zone_counts() {
        assert_eq!(zones_of("2z"), Some(2));
        assert_eq!(zones_of("0z"), Some(0));
        assert_eq!(zones_of("2"), None);
        assert_eq!(zones_of("2M"), None);
        assert_eq!(zones_of("z"), None);
        let mut o = ZbdOptions::default();
        assert_eq!(o.note_zones(2, "3z"), Some(3));
        assert_eq!(o.note_zones(2, "4M"), None);
        assert_eq!(o.zone_units, [None; 5]);
    }
}
