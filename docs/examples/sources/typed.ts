// docs/examples/sources/typed.ts
interface Reading {
  sensor: string;
  celsius: number;
}

export default defineComponent({
  name: "Thermometer",
  version: "0.1.0",
  props: { http: "$.interface.http" },
  async run(event: { body: Reading }) {
    const { sensor, celsius }: Reading = event.body;
    const fahrenheit: number = (celsius * 9) / 5 + 32;
    const name = celsius > 40 ? "alerts" : undefined; // a channel of its own, or the default one
    this.$emit({ sensor, fahrenheit }, { summary: `${sensor}: ${fahrenheit} °F`, name });
  },
});
