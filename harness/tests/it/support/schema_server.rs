//! A loopback server of the official schemas, standing in for the download site in the
//! `schemas fetch` and cold-cache tests.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::schema_dir;

/// What the server does besides serving `.../schema/<rev>/schema.json`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Serving {
    /// Serve only this revision; the others get 404.
    pub only: Option<&'static str>,
    /// Append a byte to this revision's schema, so its checksum no longer matches the pin.
    pub tamper: Option<&'static str>,
}

/// Serves `.../schema/<rev>/schema.json` from the test schemas, as `serving` says, until
/// `requests` were answered or 30 s passed; returns the base URL and a handle whose result
/// lists the revisions asked for, in order.
pub fn serve_schemas(requests: usize, serving: Serving) -> (String, JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let dir = schema_dir();
    listener.set_nonblocking(true).unwrap();
    let handle = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut served = Vec::new();
        while served.len() < requests && Instant::now() < deadline {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap() == 0 || h == "\r\n" {
                    break;
                }
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/");
            let rev = path.split('/').rev().nth(1).unwrap_or("").to_owned();
            let served_here = serving.only.is_none_or(|o| o == rev);
            let mut body = if served_here {
                std::fs::read(dir.join(&rev).join("schema.json")).unwrap_or_default()
            } else {
                Vec::new()
            };
            if serving.tamper == Some(rev.as_str()) {
                body.extend_from_slice(b" ");
            }
            let status = if served_here {
                "200 OK"
            } else {
                "404 Not Found"
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            served.push(rev);
        }
        served
    });
    (base, handle)
}
