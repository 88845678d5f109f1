//! Throwaway certificates for the TLS tests, made with the openssl command line: a CA, and
//! certificates it signs (EC P-256, valid two days, keys readable by their owner only).

use std::path::Path;
use std::process::Command;

/// Run `openssl ARGS` in `dir`; a failure fails the test with openssl's message.
pub fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Make `p` readable by its owner only (as a private key must be).
pub fn private(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
}

const KEY: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
];

/// A CA `name` in `dir` (name.pem, name.key).
pub fn ca(dir: &Path, name: &str) {
    let (subj, key, pem) = (
        format!("/CN={name}"),
        format!("{name}.key"),
        format!("{name}.pem"),
    );
    let mut args = vec!["req", "-x509"];
    args.extend(KEY);
    args.extend(["-days", "2", "-subj", &subj, "-keyout", &key, "-out", &pem]);
    openssl(dir, &args);
    private(&dir.join(&key));
}

/// A certificate `name` in `dir` (name.pem, name.key) for the names `san` (e.g.
/// `IP:127.0.0.1,DNS:localhost`) and the key usage `usage` (serverAuth or clientAuth),
/// signed by the CA `by`.
pub fn cert(dir: &Path, name: &str, by: &str, san: &str, usage: &str) {
    let (subj, key, csr) = (
        format!("/CN={name}"),
        format!("{name}.key"),
        format!("{name}.csr"),
    );
    let (ext, pem) = (format!("{name}.ext"), format!("{name}.pem"));
    let mut args = vec!["req"];
    args.extend(KEY);
    args.extend(["-subj", &subj, "-keyout", &key, "-out", &csr]);
    openssl(dir, &args);
    std::fs::write(
        dir.join(&ext),
        format!("subjectAltName={san}\nextendedKeyUsage={usage}\n"),
    )
    .unwrap();
    let (ca_pem, ca_key) = (format!("{by}.pem"), format!("{by}.key"));
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_pem,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext,
            "-out",
            &pem,
        ],
    );
    private(&dir.join(&key));
}
