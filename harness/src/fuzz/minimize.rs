//! Minimization: delta debugging over the writes of a failing sequence, then shrinking
//! inside the writes that remain, each candidate checked by replaying it.

use std::time::Instant;

use serde_json::Value;

/// How many replays minimization may spend, and until when.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most replays to spend.
    pub max_tests: usize,
    /// Stop minimizing at this instant, whatever is left.
    pub deadline: Instant,
}

impl Budget {
    fn spent(&self, tests: usize) -> bool {
        tests >= self.max_tests || Instant::now() >= self.deadline
    }
}

/// Reduces `input` (which fails) to a smaller sequence that still fails. `fails` replays
/// a candidate. Returns the result and the number of replays used.
pub async fn minimize(
    input: Vec<Vec<u8>>,
    budget: Budget,
    fails: &mut impl AsyncFnMut(&[Vec<u8>]) -> bool,
) -> (Vec<Vec<u8>>, usize) {
    let mut tests = 0;
    let mut cur = ddmin(input, budget, &mut tests, fails).await;
    for i in (0..cur.len()).rev() {
        if budget.spent(tests) {
            break;
        }
        cur = shrink_write(cur, i, budget, &mut tests, fails).await;
    }
    (cur, tests)
}

/// Zeller's ddmin over the writes: try each chunk alone, then each complement, doubling
/// the granularity when neither fails.
async fn ddmin(
    input: Vec<Vec<u8>>,
    budget: Budget,
    tests: &mut usize,
    fails: &mut impl AsyncFnMut(&[Vec<u8>]) -> bool,
) -> Vec<Vec<u8>> {
    let mut cur = input;
    // The handshake alone, then the last write alone: the commonest answers, tried first.
    for candidate in [Vec::new(), cur.last().cloned().into_iter().collect()] {
        if candidate.len() < cur.len() && !budget.spent(*tests) {
            *tests += 1;
            if fails(&candidate).await {
                if candidate.is_empty() {
                    return candidate;
                }
                cur = candidate;
            }
        }
    }
    let mut n = 2;
    while cur.len() >= 2 && !budget.spent(*tests) {
        let chunks = split(&cur, n);
        let mut reduced = false;
        for (i, chunk) in chunks.iter().enumerate() {
            if budget.spent(*tests) {
                break;
            }
            *tests += 1;
            if fails(chunk).await {
                cur = chunk.clone();
                n = 2;
                reduced = true;
                break;
            }
            if n == 2 {
                // With two chunks the complement of one is the other: already tried next.
                continue;
            }
            let complement: Vec<Vec<u8>> = chunks
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, c)| c.iter().cloned())
                .collect();
            *tests += 1;
            if fails(&complement).await {
                cur = complement;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if n >= cur.len() {
                break;
            }
            n = (n * 2).min(cur.len());
        }
    }
    cur
}

fn split(items: &[Vec<u8>], n: usize) -> Vec<Vec<Vec<u8>>> {
    let n = n.min(items.len()).max(1);
    let size = items.len().div_ceil(n);
    items.chunks(size).map(<[Vec<u8>]>::to_vec).collect()
}

/// Shrinks write `i`: JSON members removed one at a time, long strings and arrays halved,
/// long runs of one byte halved; each change kept only if the sequence still fails.
async fn shrink_write(
    mut cur: Vec<Vec<u8>>,
    i: usize,
    budget: Budget,
    tests: &mut usize,
    fails: &mut impl AsyncFnMut(&[Vec<u8>]) -> bool,
) -> Vec<Vec<u8>> {
    loop {
        let mut improved = false;
        for candidate in candidates(&cur[i]) {
            if budget.spent(*tests) {
                return cur;
            }
            let mut next = cur.clone();
            next[i] = candidate;
            *tests += 1;
            if fails(&next).await {
                cur = next;
                improved = true;
                break;
            }
        }
        if !improved {
            return cur;
        }
    }
}

/// Smaller variants of one write, most promising first.
pub fn candidates(write: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let newline = write.ends_with(b"\n");
    let body = if newline {
        &write[..write.len() - 1]
    } else {
        write
    };
    let reframe = |mut b: Vec<u8>| {
        if newline {
            b.push(b'\n');
        }
        b
    };
    if let Ok(value) = serde_json::from_slice::<Value>(body)
        && serde_json::to_vec(&value).is_ok_and(|canon| canon.len() < body.len())
    {
        // Same value, canonical form: drops padding and escapes.
        out.push(reframe(serde_json::to_vec(&value).unwrap_or_default()));
    }
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let mut paths = Vec::new();
        walk(&value, String::new(), &mut paths);
        for (path, kind) in paths {
            let mut v = value.clone();
            let changed = match kind {
                Node::Member => remove_at(&mut v, &path),
                Node::LongString(len, keep) => v
                    .pointer_mut(&path)
                    .and_then(|s| s.as_str().map(str::to_owned).map(|t| (s, t)))
                    .map(|(s, t)| {
                        let cut = t.floor_char_boundary(len * keep / 4);
                        *s = Value::String(t[..cut].to_owned());
                    })
                    .is_some(),
                Node::LongArray(len) => v
                    .pointer_mut(&path)
                    .and_then(Value::as_array_mut)
                    .map(|a| a.truncate(len / 2))
                    .is_some(),
            };
            if changed && let Ok(bytes) = serde_json::to_vec(&v) {
                out.push(reframe(bytes));
            }
        }
    }
    if let Some((start, len)) = longest_run(body)
        && len >= 64
    {
        let mut b = body.to_vec();
        b.drain(start..start + len / 2);
        out.push(reframe(b));
    }
    out
}

enum Node {
    /// An object member (not the envelope's `jsonrpc`, `id` or `method`).
    Member,
    /// A long string, and the quarters of it to keep.
    LongString(usize, usize),
    LongArray(usize),
}

fn walk(v: &Value, path: String, out: &mut Vec<(String, Node)>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{path}/{}", crate::protocol::pointer_token(k));
                let envelope = path.is_empty() && ["jsonrpc", "id", "method"].contains(&k.as_str());
                if !envelope {
                    out.push((p.clone(), Node::Member));
                }
                walk(x, p, out);
            }
        }
        Value::Array(a) => {
            if a.len() >= 2 {
                out.push((path.clone(), Node::LongArray(a.len())));
            }
            for (i, x) in a.iter().enumerate().take(8) {
                walk(x, format!("{path}/{i}"), out);
            }
        }
        Value::String(s) if s.len() >= 64 => {
            out.push((path.clone(), Node::LongString(s.len(), 2)));
            out.push((path, Node::LongString(s.len(), 3)));
        }
        _ => {}
    }
}

fn remove_at(v: &mut Value, path: &str) -> bool {
    let Some((parent, key)) = path.rsplit_once('/') else {
        return false;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    match v.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&key).is_some(),
        _ => false,
    }
}

/// The longest run of one repeated byte: (start, length).
fn longest_run(b: &[u8]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    for i in 1..=b.len() {
        if i == b.len() || b[i] != b[start] {
            if best.is_none_or(|(_, l)| i - start > l) {
                best = Some((start, i - start));
            }
            start = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn budget() -> Budget {
        Budget {
            max_tests: 500,
            deadline: Instant::now() + Duration::from_secs(10),
        }
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn ddmin_finds_the_two_writes_that_matter() {
        let input: Vec<Vec<u8>> = (0..20).map(|i| format!("w{i}\n").into_bytes()).collect();
        let mut fails =
            async |c: &[Vec<u8>]| c.contains(&b"w3\n".to_vec()) && c.contains(&b"w17\n".to_vec());
        let (out, tests) = run(minimize(input, budget(), &mut fails));
        assert_eq!(out, vec![b"w3\n".to_vec(), b"w17\n".to_vec()]);
        assert!(tests < 60, "{tests}");
    }

    #[test]
    fn shrinking_keeps_what_the_failure_needs() {
        let big = "A".repeat(100_000);
        let msg = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"{big}\",\"x\":[1,2,3]}}}}}}\n"
        );
        // Fails while the line is over 64 KiB: the string must stay long, the rest can go.
        let mut fails = async |c: &[Vec<u8>]| c.iter().any(|w| w.len() > 65_536);
        let (out, _) = run(minimize(
            vec![b"{}\n".to_vec(), msg.into_bytes()],
            budget(),
            &mut fails,
        ));
        assert_eq!(out.len(), 1);
        let text = String::from_utf8(out[0].clone()).unwrap();
        assert!(
            text.len() > 65_536 && text.len() < 140_000,
            "{}",
            text.len()
        );
        assert!(!text.contains("\"x\""), "the unneeded member is gone");
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn the_budget_is_respected() {
        let input: Vec<Vec<u8>> = (0..50).map(|i| vec![i as u8, b'\n']).collect();
        let mut calls = 0;
        let mut fails = async |_: &[Vec<u8>]| {
            calls += 1;
            false
        };
        let b = Budget {
            max_tests: 7,
            deadline: Instant::now() + Duration::from_secs(10),
        };
        let (out, tests) = run(minimize(input.clone(), b, &mut fails));
        assert_eq!(out, input);
        assert!(tests <= 8 && calls <= 8, "{tests} {calls}");
    }
}
