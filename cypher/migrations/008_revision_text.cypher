// Recall as known at a past system time (asOf.knownAt) searches the text each record had then.
CREATE FULLTEXT INDEX revision_text IF NOT EXISTS FOR (n:Revision) ON EACH [n.text];
CREATE INDEX revision_record IF NOT EXISTS FOR (n:Revision) ON (n.tenant, n.recordId);
