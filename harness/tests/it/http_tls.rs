//! `--url https://...` for real: a CA and a server certificate for 127.0.0.1 made at test
//! time (rcgen), a TLS-terminating proxy on loopback (rustls, the harness's own TLS stack)
//! in front of the misbehaving fixture's Streamable HTTP port (defect-free), and mcpcheck
//! against it. Without `--cacert` the handshake fails: exit 2, naming the certificate
//! problem. With the CA (flag or mcpcheck.toml) the transport scenarios pass over TLS.
//! Also the other setup errors not covered by `http_run.rs`: a plain web page at the URL.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;

use crate::support::*;

/// Short waits, four jobs.
fn fast() -> Vec<&'static str> {
    [&FAST_MANY_JOBS[..], &["--jobs", "4"]].concat()
}

/// A CA (PEM) and a server certificate it signed for 127.0.0.1 and localhost.
struct Pki {
    ca_pem: String,
    chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    key: rustls::pki_types::PrivateKeyDer<'static>,
}

fn pki() -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "mcpcheck test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_params =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        chain: vec![leaf.der().clone()],
        key: rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
    }
}

/// A TLS terminator on 127.0.0.1: each connection's one HTTP request goes to `backend`
/// (whose answers end with the connection, `Connection: close`), its answer back. A Host
/// naming the proxy is rewritten to the backend's, so the backend's DNS-rebinding guard
/// still sees a loopback name; any other Host passes unchanged.
struct TlsProxy {
    port: u16,
}

impl TlsProxy {
    fn start(pki: &Pki, backend: String) -> TlsProxy {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(pki.chain.clone(), pki.key.clone_key())
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let config = config.clone();
                let backend = backend.clone();
                std::thread::spawn(move || {
                    let conn = rustls::ServerConnection::new(config).unwrap();
                    let mut tls = rustls::StreamOwned::new(conn, tcp);
                    // A handshake the client refuses ends here, with an error.
                    let Some(request) = read_request(&mut tls) else {
                        return;
                    };
                    let request = rewrite_host(&request, port, &backend);
                    let Ok(mut up) = TcpStream::connect(&backend) else {
                        return;
                    };
                    let mut answer = Vec::new();
                    if up.write_all(&request).is_err() || up.read_to_end(&mut answer).is_err() {
                        return;
                    }
                    let _ = tls.write_all(&answer);
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                });
            }
        });
        TlsProxy { port }
    }
}

/// One request: the head up to the blank line, then `Content-Length` bytes.
fn read_request(stream: &mut impl Read) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return Some(buf);
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn rewrite_host(request: &[u8], proxy_port: u16, backend: &str) -> Vec<u8> {
    let end = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(request.len());
    let head = String::from_utf8_lossy(&request[..end]);
    let ours = [
        format!("127.0.0.1:{proxy_port}"),
        format!("localhost:{proxy_port}"),
    ];
    let head: Vec<String> = head
        .split("\r\n")
        .map(|line| match line.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("host") && ours.contains(&v.trim().into()) => {
                format!("host: {backend}")
            }
            _ => line.to_owned(),
        })
        .collect();
    let mut out = head.join("\r\n").into_bytes();
    out.extend_from_slice(&request[end..]);
    out
}

/// The defect-free fixture over HTTP, behind a TLS proxy; the CA's PEM file.
fn tls_fixture(name: &str) -> (HttpServer, TlsProxy, String, PathBuf) {
    let pki = pki();
    let backend = HttpServer::start(
        &misbehaving(),
        &["--transport", "http", "--bind", "127.0.0.1:0"],
    );
    let addr = backend
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let proxy = TlsProxy::start(&pki, addr);
    let ca = tempfile_path(name);
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let url = format!("https://127.0.0.1:{}/mcp", proxy.port);
    (backend, proxy, url, ca)
}

fn run(url: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    run_url_json(url, &[&fast()[..], extra].concat())
}

#[test]
fn an_untrusted_certificate_is_a_setup_error_naming_it() {
    let (_backend, _proxy, url, ca) = tls_fixture("tls-untrusted-ca.pem");
    let (code, _, text) = run(&url, &["--include", "http/*"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("TLS handshake"), "{text}");
    assert!(text.to_ascii_lowercase().contains("certificate"), "{text}");
    assert!(text.contains("--cacert"), "{text}");
    let _ = std::fs::remove_file(ca);
}

#[test]
fn the_suite_passes_over_tls_with_the_ca_given() {
    let (_backend, _proxy, url, ca) = tls_fixture("tls-ca.pem");
    let ca_arg = ca.to_string_lossy().into_owned();
    let (code, report, text) = run(
        &url,
        &[
            "--cacert",
            &ca_arg,
            "--protocol-version",
            "2025-11-25",
            "--include",
            "http/*",
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["revision"], "2025-11-25", "{text}");
    let passed = scenarios_with(&report, "pass");
    assert!(passed.len() >= 10, "{passed:?}\n{text}");
    // Host and Origin guards still hold through the proxy.
    assert!(
        passed.iter().any(|id| id == "http/foreign-host-rejected"),
        "{passed:?}"
    );
    assert!(scenarios_with(&report, "fail").is_empty(), "{text}");
    let _ = std::fs::remove_file(ca);
}

#[test]
fn the_ca_can_come_from_mcpcheck_toml() {
    let (_backend, _proxy, url, ca) = tls_fixture("tls-config-ca.pem");
    let dir = ca
        .parent()
        .unwrap()
        .join(format!("tls-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&ca, dir.join("ca.pem")).unwrap();
    // Relative to the settings file, like every path in it.
    let config = dir.join("mcpcheck.toml");
    std::fs::write(
        &config,
        format!("[server]\nurl = \"{url}\"\ncacert = \"ca.pem\"\n"),
    )
    .unwrap();
    let out = mcpcheck()
        .arg("run")
        .arg("--config")
        .arg(&config)
        .args(fast())
        .args(["--include", "http/session-id-issued"])
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(ca);
}

#[test]
fn a_cacert_that_is_not_pem_is_a_usage_error() {
    let bad = tempfile_path("tls-not-pem.pem");
    std::fs::write(&bad, "this is not a certificate\n").unwrap();
    let out = mcpcheck()
        .args(["run", "--url", "https://127.0.0.1:1/mcp", "--cacert"])
        .arg(&bad)
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("--cacert"), "{text}");
    let missing = mcpcheck()
        .args([
            "run",
            "--url",
            "https://127.0.0.1:1/mcp",
            "--cacert",
            "/nonexistent/ca.pem",
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2), "{}", describe(&missing));
    let _ = std::fs::remove_file(bad);
}

/// A web server that is not an MCP endpoint: every request gets 200 and an HTML page.
#[test]
fn a_plain_web_page_is_a_setup_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut tcp in listener.incoming().flatten() {
            std::thread::spawn(move || {
                if read_request(&mut tcp).is_some() {
                    let page = "<!doctype html><title>hello</title><p>a web page";
                    let _ = write!(
                        tcp,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                        page.len()
                    );
                }
            });
        }
    });
    let (code, _, text) = run(
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--include", "http/*"],
    );
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("not an MCP endpoint"), "{text}");
    assert!(text.contains("text/html"), "{text}");
}
