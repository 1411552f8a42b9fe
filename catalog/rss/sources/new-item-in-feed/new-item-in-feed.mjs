import { assertFeedUrl, feedStateProp, pollFeeds, pollTimerProp } from "../../common/poll-feeds.mjs";

export default {
  key: "rss-new-item-in-feed",
  name: "New item in feed",
  description: "Emits an event for each new item of an RSS or Atom feed, checked on a schedule (the items it holds at deploy first). Items already seen are not emitted again.",
  version: "0.1.0",
  type: "source",
  dedupe: "unique",
  props: {
    url: {
      type: "string",
      label: "Feed URL",
      description: "The address of the RSS 2.0, RSS 1.0 (RDF) or Atom feed, such as https://example.com/feed.xml.",
    },
    timer: pollTimerProp,
    db: feedStateProp,
  },
  hooks: {
    async deploy() {
      // The first read at once, so the feed's items show up without waiting for the timer.
      await pollFeeds(this, [assertFeedUrl(this.url, "url")]);
    },
    async activate() {
      assertFeedUrl(this.url, "url");
    },
  },
  async run() {
    await pollFeeds(this, [assertFeedUrl(this.url, "url")]);
  },
};
