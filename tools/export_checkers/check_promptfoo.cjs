// Checks an exported promptfoo suite with promptfoo's own schemas (docs/exports.md): the
// whole file against its config schema, and every assertion's type against the built-in
// assertion types (its `validate config` command accepts any type name).
// Usage: node check_promptfoo.cjs FILE.yaml — prints "ok" or the problems, exits 0 or 1.
const fs = require("fs");
const yaml = require("js-yaml");
const { UnifiedConfigSchema, BaseAssertionTypesSchema } = require("promptfoo");

// A built-in type, or one negated with "not-" (promptfoo's own AssertionTypeSchema also
// takes any string, for plugins).
const known = (type) =>
  BaseAssertionTypesSchema.safeParse(type).success ||
  (typeof type === "string" && type.startsWith("not-") && BaseAssertionTypesSchema.safeParse(type.slice(4)).success);

const config = yaml.load(fs.readFileSync(process.argv[2], "utf8"));
const problems = [];
const parsed = UnifiedConfigSchema.safeParse(config);
if (!parsed.success) problems.push(...parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
const asserts = [...((config.defaultTest || {}).assert || [])];
for (const test of config.tests || []) asserts.push(...(test.assert || []));
for (const item of asserts) {
  if (!known(item.type)) problems.push(`unknown assertion type ${item.type}`);
}
console.log(problems.length ? problems.join("\n") : "ok");
process.exit(problems.length ? 1 : 0);
