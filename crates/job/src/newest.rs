//! Options fio added from 3.34 to 3.42 (see the fio 3.42 delta reference), typed. Their
//! rows sit in the option table's category files like every other option; the values land
//! here, in [`JobOptions::newest`](crate::JobOptions), so the 3.33 set stays readable.

/// `filetype`: what every file of the job is taken to be (`none`: ask `stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileTypeOpt {
    #[default]
    None,
    File,
    Block,
    Char,
}

/// `dataplacement` (`fdp=1` is `fdp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DataPlacement {
    #[default]
    None,
    Fdp,
    Streams,
}

impl DataPlacement {
    pub fn name(self) -> &'static str {
        match self {
            DataPlacement::None => "none",
            DataPlacement::Fdp => "fdp",
            DataPlacement::Streams => "streams",
        }
    }
}

/// `plid_select`: how the next placement id is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlidSelect {
    #[default]
    RoundRobin,
    Random,
    Scheme,
}

/// Most placement ids `plids` takes (fio's limit).
pub const PLIDS_MAX: usize = 128;

/// The values of fio 3.34-3.42's new core options.
#[derive(Clone, Debug, PartialEq)]
pub struct NewestOptions {
    /// `ramp_size`: the ramp ends once the job moved this many bytes.
    pub ramp_size: Option<u64>,
    /// `comm`: the job thread's name (`prctl(PR_SET_NAME)`).
    pub comm: Option<String>,
    pub filetype: FileTypeOpt,
    /// `end_syncfs`: one `syncfs` per file system at the end of each write pass.
    pub end_syncfs: bool,
    /// `random_sequence_stride` (with `random_distribution=sequence`).
    pub random_sequence_stride: bool,
    /// `sprandom` and its parameters.
    pub sprandom: bool,
    pub spr_num_regions: u32,
    pub spr_op: f64,
    pub spr_cs: u64,
    /// `num_range`: ranges per trim.
    pub num_range: u32,
    /// `thinkcycles`: empty loop iterations after each submission round.
    pub thinkcycles: u64,
    /// `priohint`: I/O priority hint (0..1023).
    pub priohint: Option<u32>,
    /// `job_start_clock_id`: the clock of the JSON `job_start` stamp (0 = CLOCK_REALTIME).
    pub job_start_clock_id: i32,
    /// `fdp`, `dataplacement` (None: not given), `plid_select`, `plids`, `dp_scheme`.
    pub fdp: bool,
    pub dataplacement: Option<DataPlacement>,
    pub plid_select: PlidSelect,
    pub plids: Option<Vec<u16>>,
    pub dp_scheme: Option<String>,
    /// Zoned block devices (`zonemode=zbd`, which flexio does not have).
    pub recover_zbd_write_error: bool,
    pub write_zone_remainder: bool,
    /// `random_generator` / `norandommap` were given (sprandom forces them otherwise).
    pub random_generator_set: bool,
    pub norandommap_set: bool,
}

impl Default for NewestOptions {
    fn default() -> Self {
        NewestOptions {
            ramp_size: None,
            comm: None,
            filetype: FileTypeOpt::None,
            end_syncfs: false,
            random_sequence_stride: false,
            sprandom: false,
            spr_num_regions: 100,
            spr_op: 0.15,
            spr_cs: 0,
            num_range: 1,
            thinkcycles: 0,
            priohint: None,
            job_start_clock_id: 0,
            fdp: false,
            dataplacement: None,
            plid_select: PlidSelect::RoundRobin,
            plids: None,
            dp_scheme: None,
            recover_zbd_write_error: false,
            write_zone_remainder: false,
            random_generator_set: false,
            norandommap_set: false,
        }
    }
}

impl NewestOptions {
    /// The placement directive in force (`fdp=1` means FDP).
    pub fn placement(&self) -> DataPlacement {
        match self.dataplacement {
            Some(d) => d,
            None if self.fdp => DataPlacement::Fdp,
            None => DataPlacement::None,
        }
    }
}

/// Parse `plids` (`a,b-c,…`, base 0): sorted, each ≤ 0xFFFF, at most [`PLIDS_MAX`].
pub fn parse_plids(s: &str) -> Result<Vec<u16>, String> {
    let mut out: Vec<u16> = Vec::new();
    let num = |t: &str| -> Result<u64, String> {
        let t = t.trim();
        let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            u64::from_str_radix(h, 16)
        } else {
            t.parse::<u64>()
        };
        let v = v.map_err(|_| format!("'{t}' is not a placement ID"))?;
        if v > 0xFFFF {
            return Err("Placement IDs cannot exceed 0xFFFF".into());
        }
        Ok(v)
    };
    for part in s.split(',') {
        if part.trim().is_empty() {
            continue;
        }
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let v = num(part)?;
                (v, v)
            }
        };
        if b < a {
            return Err(format!("placement ID range '{part}' is reversed"));
        }
        for v in a..=b {
            if out.len() >= PLIDS_MAX {
                return Err(format!("only {PLIDS_MAX} IDs supported"));
            }
            out.push(v as u16);
        }
    }
    if out.is_empty() {
        return Err("plids needs at least one placement ID".into());
    }
    out.sort_unstable();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plids_ranges_sorted_and_bounded() {
        assert_eq!(parse_plids("3,0-2").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_plids("0x10").unwrap(), vec![16]);
        assert_eq!(
            parse_plids("70000").unwrap_err(),
            "Placement IDs cannot exceed 0xFFFF"
        );
        assert_eq!(parse_plids("0-128").unwrap_err(), "only 128 IDs supported");
        assert_eq!(parse_plids("0-127").unwrap().len(), 128);
        assert!(parse_plids("x").is_err());
    }

    #[test]
    fn fdp_means_fdp_unless_placement_given() {
        let mut n = NewestOptions::default();
        assert_eq!(n.placement(), DataPlacement::None);
        n.fdp = true;
        assert_eq!(n.placement(), DataPlacement::Fdp);
        n.dataplacement = Some(DataPlacement::Streams);
        assert_eq!(n.placement(), DataPlacement::Streams);
    }
}
