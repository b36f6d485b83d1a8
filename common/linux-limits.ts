/**
 * Linux's PATH_MAX (4,096) counts the final NUL: a path of more bytes than this fails every
 * system call with ENAMETOOLONG, so no server can open it and no decision about it is needed.
 */
export const MAX_PATH_BYTES = 4095;

/** Linux's NAME_MAX: the most bytes one name in a path may have. */
export const MAX_NAME_BYTES = 255;
