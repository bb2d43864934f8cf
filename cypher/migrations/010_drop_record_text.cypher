// record_search (009) replaces record_text: one fulltext index to maintain on every Record write.
DROP INDEX record_text IF EXISTS;
