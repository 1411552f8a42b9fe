// docs/examples/apps/weather.app.mjs
export default {
  type: "app",
  app: "weather",
  propDefinitions: {
    city: { type: "string", label: "City", description: "A city name, such as Lisbon" },
  },
  methods: {
    forecastUrl(city) {
      return `https://weather.example.com/v1/forecast?city=${encodeURIComponent(city)}`;
    },
  },
};
