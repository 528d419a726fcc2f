//! A real PostgreSQL server for the team tests: Debian's `postgresql` binaries, `initdb` into a
//! temp dir, listening on 127.0.0.1 on a free port (and a Unix socket in that dir), stopped and
//! removed on drop. As root (CI), the server runs as the `postgres` user the package creates.
//! Missing binaries are installed when the tests run as root with apt-get (as `.ci/run` does);
//! otherwise the test is skipped outside CI and fails in CI.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One test at a time installs the package.
static INSTALL: Mutex<()> = Mutex::new(());

/// Debian's server binaries (`/usr/lib/postgresql/<version>/bin`), the newest version.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The binaries, installing Debian's package first where that is possible; `None` (with why
/// printed) when they are missing outside CI.
fn binaries() -> Option<PathBuf> {
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = bin_dir() {
        return Some(d);
    }
    if is_root() && Path::new("/usr/bin/apt-get").exists() {
        let ok = Command::new("sh")
            .args([
                "-c",
                "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                 postgresql >/dev/null",
            ])
            .status()
            .is_ok_and(|s| s.success());
        if ok && let Some(d) = bin_dir() {
            return Some(d);
        }
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "PostgreSQL is not installed: .ci/run installs Debian's postgresql for the team tests"
    );
    eprintln!("skipped: PostgreSQL is not installed (apt-get install postgresql); CI installs it");
    None
}

/// A running server; stopped on drop.
pub struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
    /// With TLS (`start_with_tls`): the CA certificate that signed the server's.
    pub ca: Option<PathBuf>,
}

impl Postgres {
    /// `initdb` and start a fresh server; `None` when PostgreSQL is missing outside CI.
    pub fn start() -> Option<Postgres> {
        let bin = binaries()?;
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            chown_postgres(dir.path());
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let pg = Postgres {
            bin,
            dir,
            port,
            ca: None,
        };
        let data = pg.data();
        let pwfile = pg.dir.path().join("pw");
        std::fs::write(&pwfile, "owner-pw\n").unwrap();
        if is_root() {
            chown_postgres(&pwfile);
        }
        pg.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "owner",
                "--pwfile",
                pwfile.to_str().unwrap(),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        pg.start_server();
        // A role for mws with a password, owning its database; a role that may not create tables.
        for sql in [
            "CREATE ROLE mws LOGIN PASSWORD 'mws-pw'",
            "CREATE DATABASE team OWNER mws",
            "CREATE ROLE reader LOGIN PASSWORD 'reader-pw'",
            "CREATE DATABASE locked OWNER owner",
        ] {
            pg.sql("postgres", sql);
        }
        pg.sql("locked", "REVOKE CREATE ON SCHEMA public FROM PUBLIC");
        Some(pg)
    }

    /// `start`, with TLS on: a test CA (in the temp dir) signs a certificate for `localhost` and
    /// 127.0.0.1; the server takes plain and TLS connections.
    pub fn start_with_tls() -> Option<Postgres> {
        let mut pg = Postgres::start()?;
        let d = pg.dir.path();
        let ssl = |args: &str| {
            let out = Command::new("sh")
                .current_dir(d)
                .args(["-c", &format!("openssl {args}")])
                .output()
                .expect("openssl");
            assert!(
                out.status.success(),
                "openssl {args}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        ssl(&format!(
            "req -x509 {ec} -keyout ca.key -out ca.crt -days 2 -subj /CN=mws-test-ca"
        ));
        ssl(&format!(
            "req {ec} -keyout server.key -out server.csr -subj /CN=localhost"
        ));
        std::fs::write(
            d.join("ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             extendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        ssl(
            "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
             -days 2 -extfile ext",
        );
        std::fs::set_permissions(
            d.join("server.key"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        if is_root() {
            chown_postgres(&d.join("server.key"));
            chown_postgres(&d.join("server.crt"));
        }
        pg.ca = Some(d.join("ca.crt"));
        pg.stop_server();
        pg.start_server();
        Some(pg)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Runs one of the server's programs (as `postgres` when root); panics with its output.
    fn run(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts (or restarts) the server and waits until it accepts connections.
    pub fn start_server(&self) {
        let mut opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c full_page_writes=off \
             -c max_connections=60",
            self.port,
            self.dir.path().display()
        );
        if self.ca.is_some() {
            let d = self.dir.path().display();
            opts.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={d}/server.crt -c ssl_key_file={d}/server.key"
            ));
        }
        let log = self.dir.path().join("log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-o",
                &opts,
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
    }

    /// Stops the server at once (connections are cut, as when it crashes).
    pub fn stop_server(&self) {
        self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
    }

    /// `postgres://mws:mws-pw@127.0.0.1:<port>/team`.
    pub fn url(&self) -> String {
        format!("postgres://mws:mws-pw@127.0.0.1:{}/team", self.port)
    }

    /// A URL with other credentials or database.
    pub fn url_as(&self, user: &str, password: &str, db: &str) -> String {
        format!("postgres://{user}:{password}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL as the owner over the Unix socket.
    pub fn sql(&self, db: &str, sql: &str) {
        let sock = self.dir.path().display().to_string();
        let port = self.port.to_string();
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                &sock,
                "-p",
                &port,
                "-U",
                "owner",
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-c",
                sql,
            ])
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A client on the team database, as mws's role.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls).expect("connect to the team db")
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let exe = self.bin.join("pg_ctl");
        let data = self.data();
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let _ = cmd
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn chown_postgres(path: &Path) {
    let ok = Command::new("chown")
        .args(["postgres:postgres", path.to_str().unwrap()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "chown postgres {}", path.display());
}
