// Erasure scrubs the reasons of an erased record's receipts (they may quote its content).
CREATE INDEX receipt_record IF NOT EXISTS FOR (n:Receipt) ON (n.tenant, n.recordId);
