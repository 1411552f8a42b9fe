// docs/examples/sources/new-tickets.mjs
export default {
  name: "New tickets",
  version: "0.1.0",
  dedupe: "greatest", // remembers the greatest id emitted; only greater ids pass
  props: { http: "$.interface.http" },
  async run(event) {
    const tickets = [...event.body.tickets].sort((a, b) => a.number - b.number);
    for (const ticket of tickets) {
      this.$emit(ticket, { id: ticket.number, summary: `#${ticket.number} ${ticket.title}` });
    }
  },
};
