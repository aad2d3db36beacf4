//! The `burst` step: many requests written in one go, each answer awaited, and the
//! server's resident memory sampled before and after, so a leak shows as growth per request.

use serde_json::json;

use super::{Executor, Stop};
use crate::outcome::Severity;
use crate::protocol::RequestId;

/// Growth per request above which a burst is a warning: the server keeps something per
/// request it has answered.
pub const WARN_BYTES_PER_REQUEST: f64 = 16.0 * 1024.0;
/// Growth per request above which a burst is a failure: a clear leak.
pub const FAIL_BYTES_PER_REQUEST: f64 = 256.0 * 1024.0;

impl Executor<'_> {
    pub(super) async fn burst(
        &mut self,
        method: &str,
        count: usize,
        line: usize,
    ) -> Result<(), Stop> {
        // Two halves: the first lets a garbage-collected runtime grow its heap to its
        // working size; the second, measured, shows what stays per request.
        // `${probe}` names a request every revision answers; at the stateless revision each
        // request also carries its `_meta` fields.
        let template = crate::scenario::model::Template(json!(method));
        let method = &self.render_text(&template, line)?;
        let half = count / 2;
        self.burst_part(method, 1..=half, line).await?;
        let before = self.session.server_rss_kib();
        self.burst_part(method, half + 1..=count, line).await?;
        let count = count - half;
        let (Some(before), Some(after)) = (before, self.session.server_rss_kib()) else {
            self.unchecked.push(format!(
                "{}:{line}: memory not sampled: no server process of mcpcheck's own with /proc (Streamable HTTP, or not Linux)",
                self.scenario.source
            ));
            return Ok(());
        };
        let per_request = after.saturating_sub(before) as f64 * 1024.0 / count as f64;
        let measured = format!(
            "resident memory {before} KiB before the last {count} `{method}` requests of the burst, {after} KiB after: {:.1} KiB per request",
            per_request / 1024.0
        );
        let frame = self.session.record_event(measured.clone());
        let severity = if per_request > FAIL_BYTES_PER_REQUEST {
            Severity::Failure
        } else if per_request > WARN_BYTES_PER_REQUEST {
            Severity::Warning
        } else {
            return Ok(());
        };
        let mut f = self.filing.finding(
            severity,
            format!(
                "{measured} (a warning above {} KiB, a failure above {} KiB) ({}:{line})",
                WARN_BYTES_PER_REQUEST / 1024.0,
                FAIL_BYTES_PER_REQUEST / 1024.0,
                self.scenario.source
            ),
        );
        if let Some(i) = frame {
            f = f.at_frame(i);
        }
        self.findings.push(f);
        Ok(())
    }

    /// Writes the requests numbered `range` in one go and awaits every answer.
    async fn burst_part(
        &mut self,
        method: &str,
        range: std::ops::RangeInclusive<usize>,
        line: usize,
    ) -> Result<(), Stop> {
        let ids: Vec<String> = range
            .map(|i| format!("mcpcheck-burst-{line}-{i}"))
            .collect();
        let mut text = String::with_capacity(ids.len() * 64);
        let params = self.session.stamp_params(None);
        for id in &ids {
            let mut frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
            if let Some(p) = &params {
                frame["params"] = p.clone();
            }
            text.push_str(&frame.to_string());
            text.push('\n');
            self.session
                .expect_reply(RequestId::String(id.clone()), method);
        }
        self.collect();
        self.inbox.mark();
        self.session
            .send_raw(text.into_bytes())
            .await
            .map_err(|e| self.session_failure(&e))?;
        for id in ids {
            self.session
                .wait_reply(&RequestId::String(id))
                .await
                .map_err(|e| self.session_failure(&e))?;
        }
        Ok(())
    }
}
