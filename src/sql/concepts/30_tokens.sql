-- 30_tokens.sql: the token a transaction writes with.
-- A writer declares its token per transaction (use_token), or carries it in
-- the protected table's token column; the trigger (40_trigger.sql) checks it
-- against the marks.  Tokens are terms of fence_next_epoch() or numbers
-- from the caller's own lock service.  Declared tokens end with the
-- transaction: src/tokens/.

CREATE FUNCTION fencing.use_token(scope text, token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_use_token'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.use_token(text, bigint) IS
'Declares the token this transaction writes with in a scope; it ends with the transaction.';

CREATE FUNCTION fencing.use_token(scope text, token text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_use_token_text'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.use_token(text, text) IS
'Declares a token given as text (decimal, or hexadecimal after 0x, as ZooKeeper prints a zxid) for a scope, for this transaction.';

CREATE FUNCTION fencing.use_token(token bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_use_token_all_scopes'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.use_token(bigint) IS
'Declares the token this transaction writes with in every scope (and on tables fenced per row only).';

CREATE FUNCTION fencing.declared_token(scope text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'fencing_declared_token'
LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION fencing.declared_token(text) IS
'The token this transaction declared for a scope (or for every scope), or NULL.';
