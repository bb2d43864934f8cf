// Relate looks up existing statements about the same subject.
CREATE INDEX record_subject_lc IF NOT EXISTS FOR (n:Record) ON (n.tenant, n.subjectKey);
