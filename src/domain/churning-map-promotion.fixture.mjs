// A long-lived registry with entries coming and going, through a plain Map or a ChurningMap (churning-map.test.ts
// runs this with --trace-gc-nvp and reads what the scavenges promoted). argv: "plain" | "churning", the module's URL.
const [kind, moduleUrl] = process.argv.slice(2);
const { ChurningMap } = await import(moduleUrl);
const registry = kind === "churning" ? new ChurningMap() : new Map();
registry.set(-1, {});
registry.delete(-1);
// Old before the churn starts: allocate enough for several scavenges while it lives.
for (let index = 0; index < 3e6; index++) ({ index, list: [index] });
let id = 0;
const make = () => ({ id: id++, payload: Array.from({ length: 20 }, (_, index) => ({ index, text: `x${index}` })) });
const started = Date.now();
for (let round = 0; Date.now() - started < 1_500; round++) {
  const batch = [];
  for (let index = 0; index < 1 + ((round * 7) % 40); index++) {
    const entry = make();
    batch.push(entry);
    registry.set(entry.id, entry);
  }
  for (let index = 0; index < 300; index++) make();
  for (const entry of batch) registry.delete(entry.id);
}
