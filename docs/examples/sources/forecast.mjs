// docs/examples/sources/forecast.mjs
import weather from "../apps/weather.app.mjs";

export default {
  name: "Forecast link",
  version: "0.1.0",
  props: {
    weather, // the app prop: this.weather.<method>(), this.weather.$auth
    city: { propDefinition: [weather, "city"], label: "Forecast for" }, // a field here overrides the app's
  },
  async run() {
    this.$emit({ url: this.weather.forecastUrl(this.city), auth: this.weather.$auth });
  },
};
