/**
 * The package's export list, and all that is public: one zod discriminated union in, every
 * wire shape, description and validator out.
 */
export { defineUnion, UnionDefinitionError, MANY_VARIANTS } from './define.js';
export type { FormatWords, UnionDef, UnionOptions, Variant, VariantMeta } from './define.js';
export { describeUnion, describeVariant, listWords } from './describe.js';
export { limitsOf } from './limits.js';
export { toJsonSchema, type JsonSchema } from './json-schema.js';
export { foldExamples } from './examples.js';
export { profileTools, flatSchema, nestedSchema, oneOfSchema, unionProfiles, variantProfile } from './profiles.js';
export type { ProfileTool, UnionProfile, VariantProfile } from './profiles.js';
export { toStrict, type StrictOptions } from './strict.js';
export { decodeJsonText, freeFormPaths, withJsonText } from './free-form.js';
export { validateUnionCall, validateObject, dropNulls, parsedWith } from './validate.js';
export { pointer, MAX_ISSUES } from './issues.js';
export type { ValidationFailure, ValidationIssue, ValidationResult } from './issues.js';
export { clipText, describeKey, describeValue, loneSurrogateAt, ECHO_MAX_CHARS, POINTER_KEY_MAX_CHARS } from './echo.js';
export { schemaHash, canonicalJson } from './schema-hash.js';
