//! The findings a session keeps: all of them, up to [`MAX_PER_RULE`] of one rule; past
//! that, a count, told on the last one kept (a server repeating one fault a million times
//! costs a count, not a million findings).

use std::collections::BTreeMap;

use crate::outcome::Finding;

/// Findings of one rule kept per session.
pub const MAX_PER_RULE: usize = 100;

/// A session's findings, capped per rule.
#[derive(Debug, Default)]
pub(super) struct Kept {
    findings: Vec<Finding>,
    /// Findings past [`MAX_PER_RULE`] of one rule: counted, not kept.
    suppressed: BTreeMap<String, u64>,
}

impl std::ops::Deref for Kept {
    type Target = [Finding];

    fn deref(&self) -> &[Finding] {
        &self.findings
    }
}

impl Kept {
    /// Keeps `finding` unless its rule already has [`MAX_PER_RULE`]; says whether it did.
    pub(super) fn keep(&mut self, finding: Finding) -> bool {
        // A rule already past its cap is counted at once: a server with a finding on every
        // frame must not cost a scan of the kept findings per frame.
        if let Some(more) = self.suppressed.get_mut(&finding.rule) {
            *more += 1;
            return false;
        }
        let full = self.findings.len() >= MAX_PER_RULE
            && self
                .findings
                .iter()
                .filter(|f| f.rule == finding.rule)
                .count()
                >= MAX_PER_RULE;
        if full {
            self.suppressed.insert(finding.rule, 1);
            return false;
        }
        self.findings.push(finding);
        true
    }

    /// Adds a finding the session raises once (a shutdown's), whatever the cap.
    pub(super) fn push(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// The rules that went past the cap.
    pub(super) fn suppressed_rules(&self) -> impl Iterator<Item = &str> {
        self.suppressed.keys().map(String::as_str)
    }

    /// Forgets everything, for a new window whose findings start afresh.
    pub(super) fn clear(&mut self) {
        self.findings.clear();
        self.suppressed.clear();
    }

    /// Takes the findings, each suppressed count told on the last finding of its rule,
    /// leaving the record empty for a new window.
    pub(super) fn take(&mut self) -> Vec<Finding> {
        let mut findings = std::mem::take(&mut self.findings);
        for (rule, more) in std::mem::take(&mut self.suppressed) {
            if let Some(last) = findings.iter_mut().rev().find(|f| f.rule == rule) {
                last.message.push_str(&format!(
                    " (and {more} more like it in this session, not listed)"
                ));
            }
        }
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Severity;

    fn finding(rule: &str, n: usize) -> Finding {
        Finding::custom(rule, Severity::Failure, "spec", format!("#{n}"))
    }

    #[test]
    fn a_rule_past_its_cap_is_counted_on_its_last_finding_others_are_kept() {
        let mut kept = Kept::default();
        for n in 0..MAX_PER_RULE + 3 {
            kept.keep(finding("a", n));
        }
        assert!(kept.keep(finding("b", 0)));
        assert!(!kept.keep(finding("a", 999)));
        assert_eq!(kept.suppressed_rules().collect::<Vec<_>>(), ["a"]);
        let all = kept.take();
        assert_eq!(all.len(), MAX_PER_RULE + 1);
        let last_a = all.iter().rev().find(|f| f.rule == "a").unwrap();
        assert_eq!(
            last_a.message,
            format!(
                "#{} (and 4 more like it in this session, not listed)",
                MAX_PER_RULE - 1
            )
        );
        assert!(kept.is_empty() && kept.suppressed_rules().next().is_none());
    }
}
