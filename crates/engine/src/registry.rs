//! The engine registry: every engine flexio runs, one line each. Names, aliases, help,
//! private options, construction and kernel probes all come from the engines' own
//! [`EngineDef`] implementations; this file only lists them.

pub use crate::api::EngineDef;
use crate::api::{Caps, EngineConfig, EngineVisitor};
use flexio_job::table::{Catalog, EngineOptions, CORE};

/// An engine flexio runs, for `--enghelp`.
pub struct EngineInfo {
    pub name: &'static str,
    pub help: &'static str,
}

/// fio engines flexio does not implement, each with the reason (they get a clear "not
/// supported by flexio" error naming it, not "unknown ioengine").
pub static FIO_ONLY_ENGINES: &[(&str, &str)] = &[
    ("gfapi", "it needs a GlusterFS cluster"),
    ("gfapi_async", "it needs a GlusterFS cluster"),
    ("rdma", "it needs an RDMA fabric"),
    ("rados", "it needs a Ceph cluster"),
    ("rbd", "it needs a Ceph cluster"),
    ("pmemblk", "it needs persistent memory through libpmemblk"),
    ("dev-dax", "it needs persistent memory through libpmem"),
    ("libpmem", "it needs persistent memory through libpmem"),
    ("nfs", "it needs an NFS server through libnfs"),
    ("xnvme", "it needs the xNVMe library"),
    ("libcufile", "it needs NVIDIA GPUDirect Storage (cuFile)"),
    ("dfs", "it needs a DAOS cluster"),
    (
        "librpma_apm_client",
        "it needs an RDMA fabric and persistent memory through librpma (fio 3.38 removed it)",
    ),
    (
        "librpma_apm_server",
        "it needs an RDMA fabric and persistent memory through librpma (fio 3.38 removed it)",
    ),
    (
        "librpma_gpspm_client",
        "it needs an RDMA fabric and persistent memory through librpma (fio 3.38 removed it)",
    ),
    (
        "librpma_gpspm_server",
        "it needs an RDMA fabric and persistent memory through librpma (fio 3.38 removed it)",
    ),
    ("libblkio", "it needs the libblkio library (fio 3.34+)"),
    (
        "libhipfile",
        "it needs AMD ROCm's hipFile (GPUDirect storage)",
    ),
    ("windowsaio", "it is fio's Windows engine"),
    ("solarisaio", "it is fio's Solaris engine"),
    ("libhdfs", "it needs an HDFS cluster"),
    ("ime_psync", "it needs DDN's IME library"),
    ("ime_psyncv", "it needs DDN's IME library"),
    ("ime_aio", "it needs DDN's IME library"),
    (
        "libzbc",
        "it needs the libzbc library (zonemode=zbd itself runs on the other engines)",
    ),
    (
        "libiscsi",
        "it needs an iSCSI target through libiscsi (an external engine fio loads as a plug-in; \
         flexio loads no engine plug-ins)",
    ),
    (
        "cpp_null",
        "it is the example of an external engine written in C++, which fio loads as a plug-in \
         (ioengine=external:...); flexio loads no engine plug-ins",
    ),
];

macro_rules! registry {
    // Each line is `"file" => module: Type, ...;`, optionally preceded by
    // `#[cfg(predicate)] "name", ...: "what it needs"`: such an engine is compiled only where
    // the predicate holds and its names are otherwise rejected as "not built into this
    // flexio: it needs ...". The first rules bring every line to one shape
    // (`[predicate] [name: needs]? ...`, an always-built line gets
    // `all()`, which always holds) so the last rule can put the predicate on each item it
    // generates for that line.
    (@line [$($done:tt)*] #[cfg($c:meta)] $($name:literal),+: $needs:literal $file:literal => $m:ident: $($ty:ident),+; $($rest:tt)*) => {
        registry!(@line [$($done)* [$c] [$($name),+: $needs] $file => $m: $($ty),+;] $($rest)*);
    };
    (@line [$($done:tt)*] $file:literal => $m:ident: $($ty:ident),+; $($rest:tt)*) => {
        registry!(@line [$($done)* [all()] [] $file => $m: $($ty),+;] $($rest)*);
    };
    (@line [$($done:tt)*]) => {
        registry!(@emit $($done)*);
    };
    (@emit $( [$c:meta] [$($($name:literal),+: $needs:literal)?] $file:literal => $m:ident: $($ty:ident),+; )*) => {
        $(
            #[cfg($c)]
            #[path = $file]
            pub mod $m;
        )*

        /// Engines flexio runs, in `--enghelp` order.
        pub static ENGINES: &[EngineInfo] = &[$($(
            #[cfg($c)]
            EngineInfo {
                name: <$m::$ty as EngineDef>::NAME,
                help: <$m::$ty as EngineDef>::HELP,
            },
        )+)*];

        /// Engines this build leaves out (their cargo feature is off or the target lacks
        /// the kernel interface).
        pub static LEFT_OUT_ENGINES: &[(&str, &str)] = &[$($($(
            #[cfg(not($c))]
            ($name, $needs),
        )+)?)*];

        /// The optional engines this build has, by the name their line gives.
        #[cfg(test)]
        static OPTIONAL_BUILT: &[&str] = &[$($($(
            #[cfg($c)]
            $name,
        )+)?)*];

        /// Each engine's private options, for the job language.
        static ENGINE_OPTIONS: &[EngineOptions] = &[$($(
            #[cfg($c)]
            EngineOptions {
                engine: <$m::$ty as EngineDef>::NAME,
                aliases: <$m::$ty as EngineDef>::ALIASES,
                groups: <$m::$ty as EngineDef>::OPTIONS,
                since: <$m::$ty as EngineDef>::SINCE,
            },
        )+)*];

        /// Build the named engine and hand it to `v` (the loop is compiled per engine).
        pub fn with_engine<V: EngineVisitor>(
            name: &str,
            cfg: &EngineConfig,
            v: V,
        ) -> Result<V::Out, String> {
            CATALOG.check_engine(name)?;
            $($(
                #[cfg($c)]
                {
                    if is::<$m::$ty>(name) {
                        return Ok(v.visit(<$m::$ty as EngineDef>::build(cfg)));
                    }
                }
            )+)*
            Err(format!("unknown ioengine '{name}'"))
        }

        /// Check, before any job runs, that the kernel provides what the engine needs
        /// with the job's options (io_uring with its ring flags, native AIO).
        pub fn probe(name: &str, cfg: &EngineConfig) -> Result<(), String> {
            $($(
                #[cfg($c)]
                {
                    if is::<$m::$ty>(name) {
                        return <$m::$ty as EngineDef>::probe(cfg);
                    }
                }
            )+)*
            CATALOG.check_engine(name)
        }

        /// The size of a character device an engine drives (see [`EngineDef::device_size`]).
        pub fn device_size(
            name: &str,
            path: &std::path::Path,
            cfg: &EngineConfig,
        ) -> Result<Option<u64>, String> {
            $($(
                #[cfg($c)]
                {
                    if is::<$m::$ty>(name) {
                        return <$m::$ty as EngineDef>::device_size(path, cfg);
                    }
                }
            )+)*
            Ok(None)
        }

        /// The size of an engine's target when it is not a file and the engine can tell
        /// (see [`EngineDef::target_size`]).
        pub fn target_size(name: &str, cfg: &EngineConfig) -> Result<Option<u64>, String> {
            $($(
                #[cfg($c)]
                {
                    if is::<$m::$ty>(name) {
                        return <$m::$ty as EngineDef>::target_size(cfg);
                    }
                }
            )+)*
            Ok(None)
        }
    };
    ($($lines:tt)*) => {
        registry!(@line [] $($lines)*);
    };
}

/// Whether `name` names engine `E` (or one of its aliases).
fn is<E: EngineDef>(name: &str) -> bool {
    name == E::NAME || E::ALIASES.contains(&name)
}

// Every engine: its file (under `engines/`) and the engine types it defines, in
// `--enghelp` order.
registry! {
    "engines/sync.rs" => sync: SyncRw, Psync, Vsync, Pvsync;
    #[cfg(any(target_os = "linux", target_os = "android"))] "pvsync2": "Linux (preadv2/pwritev2)"
    "engines/pvsync2.rs" => pvsync2: Pvsync2;
    // RTEMS: what the RTEMS port leaves out (docs/embedded.md).
    #[cfg(not(target_os = "rtems"))] "mmap": "mmap(2) of files (not supported by flexio on RTEMS)"
    "engines/mmap.rs" => mmap: Mmap;
    #[cfg(not(target_os = "rtems"))] "page_fault": "anonymous mmap(2) (not supported by flexio on RTEMS)"
    "engines/page_fault.rs" => page_fault: PageFault;
    "engines/null.rs" => null: Null;
    "engines/ftruncate.rs" => ftruncate: Ftruncate;
    "engines/fileops.rs" => fileops: FileCreate, FileStat, FileDelete;
    "engines/dirops.rs" => dirops: DirCreate, DirStat, DirDelete;
    #[cfg(any(target_os = "linux", target_os = "android"))] "mdtree": "Linux (getdents64)"
    "engines/mdtree.rs" => mdtree: MdTree;
    #[cfg(not(target_os = "rtems"))] "falloc": "fallocate (not supported by flexio on RTEMS)"
    "engines/falloc.rs" => falloc: Falloc;
    // Linux's asynchronous interfaces, cargo features on by default. io_uring needs a
    // 64-bit target (the io-uring crate's bindings are 64-bit only).
    #[cfg(all(feature = "io_uring", target_os = "linux", target_pointer_width = "64"))]
    "io_uring": "64-bit Linux and the cargo feature io_uring"
    "engines/uring.rs" => uring: Uring;
    #[cfg(all(feature = "io_uring", target_os = "linux", target_pointer_width = "64"))]
    "io_uring_cmd": "64-bit Linux and the cargo feature io_uring"
    "engines/uring_cmd.rs" => uring_cmd: UringCmd;
    #[cfg(all(feature = "libaio", target_os = "linux"))]
    "libaio": "Linux and the cargo feature libaio"
    "engines/libaio.rs" => libaio: Libaio;
    #[cfg(not(target_os = "rtems"))] "posixaio": "POSIX AIO through libc (not supported by flexio on RTEMS)"
    "engines/posixaio.rs" => posixaio: Posixaio;
    "engines/cpuio.rs" => cpuio: CpuIo;
    #[cfg(not(target_os = "rtems"))] "exec": "processes (not supported by flexio on RTEMS)"
    "engines/exec.rs" => exec: Exec;
    #[cfg(not(target_os = "rtems"))] "cmdtime": "processes (not supported by flexio on RTEMS)"
    "engines/cmdtime.rs" => cmdtime: CmdTime;
    #[cfg(not(target_os = "rtems"))] "net", "netsplice": "rustix's sockets (not supported by flexio on RTEMS)"
    "engines/net.rs" => net: Net, NetSplice;
    #[cfg(any(target_os = "linux", target_os = "android"))] "splice": "Linux (splice/vmsplice)"
    "engines/splice.rs" => splice: Splice;
    #[cfg(any(target_os = "linux", target_os = "android"))] "e4defrag": "Linux (EXT4_IOC_MOVE_EXT)"
    "engines/e4defrag.rs" => e4defrag: E4Defrag;
    "engines/nbd.rs" => nbd: Nbd;
    "engines/http.rs" => http: Http;
    // Passthrough to SCSI devices and raw flash (Linux ioctls).
    #[cfg(any(target_os = "linux", target_os = "android"))] "sg": "Linux (SG_IO)"
    "engines/sg.rs" => sg: Sg;
    #[cfg(any(target_os = "linux", target_os = "android"))] "mtd": "Linux (MTD ioctls)"
    "engines/mtd.rs" => mtd: Mtd;
}

/// Every option and engine name the job language knows: the core option table and the
/// engines above with their private options.
pub static CATALOG: Catalog = Catalog {
    core: CORE,
    engines: ENGINE_OPTIONS,
    fio_only_engines: FIO_ONLY_ENGINES,
    left_out_engines: LEFT_OUT_ENGINES,
    fio_only_options: FIO_ONLY_ENGINE_OPTIONS,
};

/// The private options of fio's engines flexio does not run (names only): a job of such an
/// engine parses them, as fio does, and its run says the engine is not available.
pub static FIO_ONLY_ENGINE_OPTIONS: &[(&str, &[&str])] = &[
    ("nfs", &["nfs_url"]),
    (
        "rbd",
        &["clustername", "rbdname", "pool", "clientname", "busy_poll"],
    ),
    (
        "rados",
        &[
            "clustername",
            "pool",
            "clientname",
            "conf",
            "busy_poll",
            "touch_objects",
        ],
    ),
    ("gfapi", &["volume", "brick"]),
    ("gfapi_async", &["volume", "brick"]),
    ("rdma", &["hostname", "bindname", "port", "verb"]),
    ("libcufile", &["gpu_dev_ids", "cuda_io"]),
    (
        "dfs",
        &["pool", "cont", "chunk_size", "object_class", "svcl"],
    ),
    (
        "xnvme",
        &[
            "xnvme_be",
            "xnvme_async",
            "xnvme_sync",
            "xnvme_admin",
            "xnvme_dev_nsid",
            "xnvme_dev_subnqn",
            "xnvme_mem",
            "xnvme_iovec",
        ],
    ),
    (
        "libhdfs",
        &[
            "namenode",
            "hostname",
            "port",
            "hdfsdirectory",
            "chunk_size",
            "single_instance",
            "hdfs_use_direct",
        ],
    ),
];

/// Capabilities of an engine with a job's configuration (they may depend on its options:
/// io_uring with a kernel polling thread has no submission step to measure), without
/// running it.
pub fn caps_of(name: &str, cfg: &EngineConfig) -> Option<Caps> {
    struct C;
    impl EngineVisitor for C {
        type Out = Caps;
        fn visit<E: EngineDef>(self, e: E) -> Caps {
            e.caps()
        }
    }
    with_engine(name, cfg, C).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_only_engines_say_why() {
        for (name, why) in FIO_ONLY_ENGINES {
            let m = CATALOG.check_engine(name).unwrap_err();
            assert!(m.contains("is not supported by flexio: "), "{m}");
            assert!(m.ends_with(why), "{m}");
        }
        for name in ["cpp_null", "libiscsi", "external:/lib/x.so"] {
            let m = CATALOG.check_engine(name).unwrap_err();
            assert!(m.contains("plug-in"), "{name}: {m}");
            assert!(CATALOG.is_known_engine(name));
        }
        assert!(CATALOG
            .check_engine("nosuch")
            .unwrap_err()
            .contains("unknown ioengine"));
    }

    #[test]
    fn no_option_is_both_supported_and_unsupported() {
        // Every name of the full catalog, core and engine rows, canonical and aliases.
        let mut names = 0;
        for d in CATALOG.rows() {
            for n in std::iter::once(d.name).chain(d.aliases.iter().copied()) {
                names += 1;
                assert!(
                    !flexio_job::table::UNSUPPORTED.contains(&n),
                    "option {n} has a row and is listed as not supported"
                );
            }
        }
        assert!(
            names > CATALOG.core_rows().count(),
            "engine rows are included"
        );
        for n in flexio_job::table::UNSUPPORTED {
            assert!(
                CATALOG.lookup(n).is_none(),
                "{n} is both supported and unsupported"
            );
        }
    }

    #[test]
    fn net_protocol_has_fios_alias_proto() {
        let d = CATALOG.lookup("proto").expect("proto");
        assert_eq!(d.name, "protocol");
    }

    #[test]
    fn names_and_options_are_consistent() {
        let mut names = std::collections::HashSet::new();
        for e in CATALOG.engines {
            for n in std::iter::once(e.engine).chain(e.aliases.iter().copied()) {
                assert!(names.insert(n), "engine name {n} twice");
                assert!(
                    !FIO_ONLY_ENGINES.iter().any(|(f, _)| *f == n),
                    "{n} both run and rejected"
                );
            }
            assert!(
                caps_of(e.engine, &EngineConfig::default()).is_some(),
                "{} cannot be built",
                e.engine
            );
        }
        // An option name shared by several engines has one kind everywhere (its typed value
        // is read back by each of them), and no engine option shadows a core option.
        for d in CATALOG.engine_rows() {
            assert!(
                CATALOG.core_rows().all(|c| c.name != d.name),
                "engine option {} is also a core option",
                d.name
            );
            for e in CATALOG.engines {
                for o in e.groups.iter().flat_map(|g| g.iter()) {
                    if o.name == d.name {
                        assert_eq!(
                            format!("{:?}", o.kind),
                            format!("{:?}", d.kind),
                            "option {} differs between engines",
                            d.name
                        );
                    }
                }
            }
        }
        assert!(with_engine("rbd", &EngineConfig::default(), NoVisit).is_err());
        // An optional engine is either built (under the name its registry line gives) or
        // rejected with the reason, never both, never unknown.
        for n in OPTIONAL_BUILT {
            assert!(
                ENGINES.iter().any(|e| e.name == *n),
                "{n} built but not listed"
            );
        }
        for (n, _) in LEFT_OUT_ENGINES {
            assert!(
                ENGINES.iter().all(|e| e.name != *n),
                "{n} both built and left out"
            );
            let e = with_engine(n, &EngineConfig::default(), NoVisit)
                .err()
                .unwrap();
            assert!(e.contains("not built into this flexio"), "{e}");
        }
    }

    struct NoVisit;
    impl EngineVisitor for NoVisit {
        type Out = ();
        fn visit<E: EngineDef>(self, _: E) {}
    }
}
