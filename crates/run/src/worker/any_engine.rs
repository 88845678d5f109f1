//! One I/O loop for every engine (cargo feature `shared_loop`, used by the small static
//! builds for boards). The loop is generic over its engine so that each engine's calls
//! inline into it; that compiles the loop once per engine, about 30 KB of x86-64 code and
//! 50 KB of MIPS code each: 0.75 MB of the x86-64 static build, 1.1 MB of the mipsel one.
//! With `shared_loop` the
//! job thread hands the loop its engine behind a pointer instead: one loop, one indirect
//! call per engine call (the cost is measured in docs/embedded.md).

use flexio_engine::buffer::IoBuffers;
use flexio_engine::{Caps, Completion, Engine, FileInfo, IoReq, Queued};
use std::io;
use std::path::Path;

/// Any engine, called through its vtable. Every method of [`Engine`] is forwarded here
/// (one that were not would silently take the trait's default in this build only).
pub struct AnyEngine<'a>(pub Box<dyn Engine + 'a>);

impl Engine for AnyEngine<'_> {
    fn caps(&self) -> Caps {
        self.0.caps()
    }
    fn init(&mut self) -> io::Result<()> {
        self.0.init()
    }
    fn setup(&mut self, paths: &[&Path]) -> io::Result<()> {
        self.0.setup(paths)
    }
    fn lost(&self) -> [u64; 3] {
        self.0.lost()
    }
    fn init_notes(&self) -> Vec<String> {
        self.0.init_notes()
    }
    fn post_init(&mut self, bufs: &IoBuffers) -> io::Result<()> {
        self.0.post_init(bufs)
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        self.0.open_file(file, f)
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        self.0.close_file(file)
    }
    fn file_op(&mut self, path: &Path) -> io::Result<()> {
        self.0.file_op(path)
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        self.0.queue(io)
    }
    #[inline]
    fn last_kind(&self) -> usize {
        self.0.last_kind()
    }
    #[inline]
    fn untimed(&mut self) -> io::Result<()> {
        self.0.untimed()
    }
    fn wrap_up(&mut self) -> io::Result<()> {
        self.0.wrap_up()
    }
    fn failed_op(&self) -> Option<String> {
        self.0.failed_op()
    }
    #[inline]
    fn stamps(&self, idx: u32) -> Option<(u64, u64)> {
        self.0.stamps(idx)
    }
    #[inline]
    fn commit(&mut self) -> io::Result<usize> {
        self.0.commit()
    }
    #[inline]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        self.0.reap(min, max, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_engine::{EngineConfig, EngineDef, EngineVisitor};

    /// The wrapped engine answers, not the trait's defaults: filecreate's capabilities
    /// and its file operation (the default file_op fails with EINVAL).
    #[test]
    fn forwards_to_the_wrapped_engine() {
        struct Check<'p>(&'p Path);
        impl EngineVisitor for Check<'_> {
            type Out = (bool, bool, io::Result<()>);
            fn visit<E: EngineDef>(self, e: E) -> Self::Out {
                let direct = e.caps();
                let mut any = AnyEngine(Box::new(e));
                let caps = any.caps();
                (direct.file_op, caps.file_op, any.file_op(self.0))
            }
        }
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("made");
        let cfg = EngineConfig {
            iodepth: 1,
            nfiles: 1,
            ..Default::default()
        };
        let (direct, any, op) =
            flexio_engine::with_engine("filecreate", &cfg, Check(&path)).unwrap();
        assert!(direct && any);
        op.unwrap();
        assert!(path.exists());
    }
}
