// Reading a query in web-search syntax into the terms the full-text search ORs and excludes.
import { anyOf, parseSearchQuery } from '../../src/documents/search-query';

describe('parseSearchQuery', () => {
  it('when a query is plain words, then each word is a term', () => {
    expect(parseSearchQuery('Can I get a refund?')).toEqual({ include: ['Can', 'I', 'get', 'a', 'refund?'], exclude: [] });
  });

  it('when a query quotes a phrase, then the phrase is one term', () => {
    expect(parseSearchQuery('"dry ice" gloves')).toEqual({ include: ['dry ice', 'gloves'], exclude: [] });
  });

  it('when a word or phrase starts with a minus, then it is excluded', () => {
    expect(parseSearchQuery('refund -"gift card" -melted ice-cream')).toEqual({
      include: ['refund', 'ice-cream'],
      exclude: ['gift card', 'melted'],
    });
  });

  it('when a query says "or", then the word is dropped, since every term is OR-ed anyway', () => {
    expect(parseSearchQuery('refund OR exchange or')).toEqual({ include: ['refund', 'exchange'], exclude: [] });
  });

  it('when a quote is never closed, then the phrase runs to the end', () => {
    expect(parseSearchQuery('hours "sunday opening')).toEqual({ include: ['hours', 'sunday opening'], exclude: [] });
  });

  it('when a query is only punctuation, minus signs or empty quotes, then there is no term', () => {
    for (const q of ['', '   ', '-', '--', '""', '" "', '-""']) expect(parseSearchQuery(q).include).toEqual([]);
  });
});

describe('anyOf', () => {
  it('when terms are joined, then phrases stay quoted and terms are OR-ed', () => {
    expect(anyOf(['refund', 'dry ice'])).toBe('refund or "dry ice"');
    expect(anyOf([])).toBe('');
  });
});
