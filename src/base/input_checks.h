/*-------------------------------------------------------------------------
 *
 * input_checks.h
 *	  Checks of user-supplied values shared by every module.
 *
 *-------------------------------------------------------------------------
 */
#ifndef INPUT_CHECKS_H
#define INPUT_CHECKS_H

#include "fencing.h"

/* Validation of user-supplied values, shared by every module. */
extern void fencing_check_scope_name(const char *scope);
extern void fencing_check_holder(const char *holder);
extern void fencing_check_token(int64 token);
extern void fencing_check_mark(const char *scope, int64 mark);
extern void fencing_check_name_args(FunctionCallInfo fcinfo, char **scope, char **holder);

#endif							/* INPUT_CHECKS_H */
