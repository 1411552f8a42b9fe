import { assertFeedUrl, feedStateProp, MAX_FEEDS, pollFeeds, pollTimerProp } from "../../common/poll-feeds.mjs";

export default {
  key: "rss-new-item-from-multiple-feeds",
  name: "New item from multiple feeds",
  description:
    "Emits an event for each new item of several RSS or Atom feeds, checked on a schedule (the items they hold at deploy first). A feed that cannot be read is logged and skipped; the others are still read.",
  version: "0.1.0",
  type: "source",
  dedupe: "unique",
  props: {
    urls: {
      type: "string[]",
      label: "Feed URLs",
      description: `The addresses of the RSS 2.0, RSS 1.0 (RDF) or Atom feeds (at most ${MAX_FEEDS}).`,
    },
    timer: pollTimerProp,
    db: feedStateProp,
  },
  methods: {
    feedUrls() {
      const urls = Array.isArray(this.urls) ? this.urls : [];
      if (urls.length === 0) throw new Error('Prop "urls" must list at least one feed address.');
      if (urls.length > MAX_FEEDS) throw new Error(`Prop "urls" lists ${urls.length} feeds; one source reads at most ${MAX_FEEDS}. Split them over several sources.`);
      return [...new Set(urls.map((url, index) => assertFeedUrl(url, `urls[${index}]`)))];
    },
  },
  hooks: {
    async deploy() {
      // The first read at once, so the feed's items show up without waiting for the timer.
      await pollFeeds(this, this.feedUrls());
    },
    async activate() {
      this.feedUrls();
    },
  },
  async run() {
    await pollFeeds(this, this.feedUrls());
  },
};
