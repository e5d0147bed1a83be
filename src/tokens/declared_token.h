/*-------------------------------------------------------------------------
 *
 * declared_token.h
 *	  Tokens a transaction declares for the writes it makes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DECLARED_TOKEN_H
#define DECLARED_TOKEN_H

#include "fencing.h"

/* Called by end_of_xact.c, in its order. */
/* Defines fencing.declared_tokens, the declarations another node sent. */
extern void declared_token_init(void);

extern void declared_token_at_xact_end(void);
extern void declared_token_at_subxact_abort(SubTransactionId mySubid);

/*
 * The token this transaction declared for "scope" (or, failing that, for
 * every scope); scope may be NULL for tables fenced per row only.
 */
extern bool declared_token_lookup(const char *scope, int64 *token);

/* The same, with the role that declared it (the role offering the token). */
extern bool declared_token_lookup_offerer(const char *scope, int64 *token, Oid *role);

/* Whether this transaction declared any token, for any scope. */
extern bool declared_token_any(void);

/* Strict text-to-token parsing: decimal, or hexadecimal with a 0x prefix. */
extern int64 parse_token_string(const char *str);

#endif							/* DECLARED_TOKEN_H */
