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

/// fio engines flexio does not implement (they get a clear error, not "unknown").
pub static FIO_ONLY_ENGINES: &[&str] = &[
    "io_uring_cmd",
    "gfapi",
    "gfapi_async",
    "mtd",
    "sg",
    "rdma",
    "rados",
    "rbd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "nfs",
    "xnvme",
    "libcufile",
    "dfs",
    "windowsaio",
    "solarisaio",
    "libhdfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
];

macro_rules! registry {
    ($( $file:literal => $m:ident: $($ty:ident),+; )*) => {
        $(
            #[path = $file]
            pub mod $m;
        )*

        /// Engines flexio runs, in `--enghelp` order.
        pub static ENGINES: &[EngineInfo] = &[$($(
            EngineInfo {
                name: <$m::$ty as EngineDef>::NAME,
                help: <$m::$ty as EngineDef>::HELP,
            },
        )+)*];

        /// Each engine's private options, for the job language.
        static ENGINE_OPTIONS: &[EngineOptions] = &[$($(
            EngineOptions {
                engine: <$m::$ty as EngineDef>::NAME,
                aliases: <$m::$ty as EngineDef>::ALIASES,
                groups: <$m::$ty as EngineDef>::OPTIONS,
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
                    if is::<$m::$ty>(name) {
                    return Ok(v.visit(<$m::$ty as EngineDef>::build(cfg)));
                }
            )+)*
            Err(format!("unknown ioengine '{name}'"))
        }

        /// Check, before any job runs, that the kernel provides what the engine needs
        /// with the job's options (io_uring with its ring flags, native AIO).
        pub fn probe(name: &str, cfg: &EngineConfig) -> Result<(), String> {
            $($(
                    if is::<$m::$ty>(name) {
                    return <$m::$ty as EngineDef>::probe(cfg);
                }
            )+)*
            CATALOG.check_engine(name)
        }

        /// The size of an engine's target when it is not a file and the engine can tell
        /// (see [`EngineDef::target_size`]).
        pub fn target_size(name: &str, cfg: &EngineConfig) -> Result<Option<u64>, String> {
            $($(
                    if is::<$m::$ty>(name) {
                    return <$m::$ty as EngineDef>::target_size(cfg);
                }
            )+)*
            Ok(None)
        }
    };
}

/// Whether `name` names engine `E` (or one of its aliases).
fn is<E: EngineDef>(name: &str) -> bool {
    name == E::NAME || E::ALIASES.contains(&name)
}

// Every engine: its file (under `engines/`) and the engine types it defines, in
// `--enghelp` order.
registry! {
    "engines/sync.rs" => sync: SyncRw, Psync, Vsync, Pvsync, Pvsync2;
    "engines/mmap.rs" => mmap: Mmap;
    "engines/null.rs" => null: Null;
    "engines/ftruncate.rs" => ftruncate: Ftruncate;
    "engines/fileops.rs" => fileops: FileCreate, FileStat, FileDelete;
    "engines/dirops.rs" => dirops: DirCreate, DirStat, DirDelete;
    "engines/mdtree.rs" => mdtree: MdTree;
    "engines/falloc.rs" => falloc: Falloc;
    "engines/uring.rs" => uring: Uring;
    "engines/libaio.rs" => libaio: Libaio;
    "engines/posixaio.rs" => posixaio: Posixaio;
    "engines/cpuio.rs" => cpuio: CpuIo;
    "engines/exec.rs" => exec: Exec;
    "engines/cmdtime.rs" => cmdtime: CmdTime;
    "engines/net.rs" => net: Net, NetSplice;
    "engines/splice.rs" => splice: Splice;
    "engines/e4defrag.rs" => e4defrag: E4Defrag;
    "engines/nbd.rs" => nbd: Nbd;
    "engines/http.rs" => http: Http;
}

/// Every option and engine name the job language knows: the core option table and the
/// engines above with their private options.
pub static CATALOG: Catalog = Catalog {
    core: CORE,
    engines: ENGINE_OPTIONS,
    fio_only_engines: FIO_ONLY_ENGINES,
};

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
    fn names_and_options_are_consistent() {
        let mut names = std::collections::HashSet::new();
        for e in CATALOG.engines {
            for n in std::iter::once(e.engine).chain(e.aliases.iter().copied()) {
                assert!(names.insert(n), "engine name {n} twice");
                assert!(!FIO_ONLY_ENGINES.contains(&n), "{n} both run and rejected");
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
    }

    struct NoVisit;
    impl EngineVisitor for NoVisit {
        type Out = ();
        fn visit<E: EngineDef>(self, _: E) {}
    }
}
