// Legal holds (issue #13): one node per hold, found by tenant and id.
CREATE CONSTRAINT hold_key IF NOT EXISTS FOR (n:Hold) REQUIRE (n.tenant, n.id) IS UNIQUE;
