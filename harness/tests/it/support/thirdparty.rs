//! The Python MCP SDK server `thirdparty/mcp_sdk_server.py`, under the venv
//! `thirdparty/setup.sh` installs (a [`require`](super::require)d prerequisite).

use super::{HttpServer, eventually, free_port, python_venv, workspace};

/// The stdio command line: `[python, script]`.
pub fn python_sdk_stdio() -> Option<Vec<String>> {
    let python = python_venv()?;
    let script = workspace().join("thirdparty/mcp_sdk_server.py");
    Some(vec![
        python.display().to_string(),
        script.display().to_string(),
    ])
}

/// The server on a free loopback port: `mode` is `--http` (Streamable HTTP) or `--sse`
/// (2024-11-05 HTTP+SSE); `extra` follows the port (`--listen`).
pub fn python_sdk_http(mode: &str, extra: &[&str]) -> Option<HttpServer> {
    let server = python_sdk_stdio()?;
    let port = free_port();
    let args = [&[server[1].as_str(), mode, &port][..], extra].concat();
    let http = HttpServer::start(&server[0], &args);
    // The URL is printed before uvicorn listens: wait for the port.
    let addr = format!("127.0.0.1:{port}");
    assert!(
        eventually(20, || std::net::TcpStream::connect(&addr).is_ok()),
        "the Python SDK server ({mode}) did not listen"
    );
    Some(http)
}
