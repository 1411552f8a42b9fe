// docs/examples/apps/weather.app.mjs
export default {
  type: "app",
  app: "weather",
  propDefinitions: {
    city: {
      type: "string",
      label: "City",
      description: "A city name, such as Lisbon",
      async options({ query }) {
        const cities = ["Lisbon", "Porto", "Porto Alegre", "Recife"];
        return cities.filter((city) => city.toLowerCase().includes((query ?? "").toLowerCase()));
      },
    },
  },
  methods: {
    forecastUrl(city) {
      return `https://weather.example.com/v1/forecast?city=${encodeURIComponent(city)}`;
    },
  },
};
