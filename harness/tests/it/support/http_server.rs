//! A server under test that listens on loopback HTTP: started with port 0, its URL read
//! from the line it prints on stderr, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    /// Starts `program args...` and waits (up to 20 s) for a stderr line holding
    /// `http://127.0.0.1:PORT/...`. The rest of stderr is drained in the background.
    pub fn start(program: &str, args: &[&str]) -> HttpServer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program}: {e}"));
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(at) = line.find("http://") {
                    let url = line[at..]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    let _ = tx.send(url);
                    sent = true;
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{program} did not print its URL");
            }
        };
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
