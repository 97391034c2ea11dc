-- Demo data for `orbitctl dev` (loaded once, into an empty database): three people and a guest
-- (Zoe's grandfather, who has no account), a team, a weekly practice, a game, a few posts and a
-- poll, three expenses (one in the team's own category), an income, a settlement with notes,
-- season dues, payment handles and providers (pay links in settle-up) and a nudge. Fixed ids, so that README examples and curl sessions can name them.
INSERT INTO users (id, apple_id, email, display_name) VALUES
    ('00000000-0000-4000-8000-00000000a0a0', 'demo.ada', 'ada@example.com', 'Ada Lovelace'),
    ('00000000-0000-4000-8000-00000000b0b0', 'demo.max', 'max@example.com', 'Max Planck'),
    ('00000000-0000-4000-8000-00000000c0c0', 'demo.zoe', 'zoe@example.com', 'Zoe Washington');

INSERT INTO communities (id, name, description, created_by, settings) VALUES
    ('00000000-0000-4000-8000-0000000c0001', 'Tigers U10', 'Saturday soccer, Tuesday practice',
     '00000000-0000-4000-8000-00000000a0a0', '{"timezone": "America/New_York", "defaultReminderHours": 24, "remindOldDebts": true, "remindOldDebtsDays": 14}');

INSERT INTO members (community_id, user_id, role) VALUES
    ('00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0', 'admin'),
    ('00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000b0b0', 'member'),
    ('00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000c0c0', 'member');

-- A guest: a user row nobody signs in as, a member of this team only (docs/money.md, "Guests").
INSERT INTO users (id, apple_id, email, display_name, is_guest) VALUES
    ('00000000-0000-4000-8000-00000000d0d0', 'guest.00000000-0000-4000-8000-00000000d0d0', '', 'Grandpa Joe', true);
INSERT INTO members (community_id, user_id, role, invited_by) VALUES
    ('00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000d0d0', 'member', '00000000-0000-4000-8000-00000000c0c0');

INSERT INTO family_members (user_id, name) VALUES ('00000000-0000-4000-8000-00000000b0b0', 'Tommy Planck');

-- Practice every Tuesday at 6 pm New York time, from the coming Tuesday; a game next Saturday.
INSERT INTO events (id, community_id, created_by, title, starts_at, ends_at, category, recurrence_rule, recurrence_timezone, location_name) VALUES
    ('00000000-0000-4000-8000-0000000e0001', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0',
     'Practice', (date_trunc('week', now() AT TIME ZONE 'America/New_York') + interval '8 days 18 hours') AT TIME ZONE 'America/New_York',
     (date_trunc('week', now() AT TIME ZONE 'America/New_York') + interval '8 days 19 hours 30 minutes') AT TIME ZONE 'America/New_York',
     'practice', 'FREQ=WEEKLY;BYDAY=TU', 'America/New_York', 'Riverside Park, field 3'),
    ('00000000-0000-4000-8000-0000000e0002', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0',
     'Game vs. Lions', (date_trunc('week', now() AT TIME ZONE 'America/New_York') + interval '12 days 10 hours') AT TIME ZONE 'America/New_York',
     NULL, 'game', NULL, NULL, 'Central Park, Great Lawn');

INSERT INTO rsvps (event_id, user_id, status) VALUES
    ('00000000-0000-4000-8000-0000000e0002', '00000000-0000-4000-8000-00000000b0b0', 'yes'),
    ('00000000-0000-4000-8000-0000000e0002', '00000000-0000-4000-8000-00000000c0c0', 'maybe');

INSERT INTO posts (id, community_id, author_id, type, content, is_pinned, is_announcement, poll_data) VALUES
    ('00000000-0000-4000-8000-0000000f0001', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0',
     'announcement', 'Welcome to the Tigers! Practice is Tuesdays at 6 pm.', true, true, NULL),
    ('00000000-0000-4000-8000-0000000f0002', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0',
     'poll', 'Team dinner after the game?', false, false,
     '{"question": "Team dinner after the game?", "options": ["Pizza", "Tacos", "No dinner"], "allowMultiple": false}'),
    ('00000000-0000-4000-8000-0000000f0003', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000b0b0',
     'text', 'Tommy can''t wait for Saturday!', false, false, NULL);

INSERT INTO comments (post_id, author_id, content) VALUES
    ('00000000-0000-4000-8000-0000000f0003', '00000000-0000-4000-8000-00000000c0c0', 'Same here!');
INSERT INTO reactions (post_id, user_id, type) VALUES
    ('00000000-0000-4000-8000-0000000f0001', '00000000-0000-4000-8000-00000000b0b0', 'like'),
    ('00000000-0000-4000-8000-0000000f0001', '00000000-0000-4000-8000-00000000c0c0', 'celebrate');
INSERT INTO poll_votes (post_id, user_id, option_index) VALUES
    ('00000000-0000-4000-8000-0000000f0002', '00000000-0000-4000-8000-00000000b0b0', 0);

-- Ada bought new balls: 45.00 split three ways.
INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, category, transaction_date) VALUES
    ('00000000-0000-4000-8000-0000000d0001', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0',
     'expense', 'New balls', 4500, '00000000-0000-4000-8000-00000000a0a0', 'equipment', current_date);
INSERT INTO splits (transaction_id, user_id, amount) VALUES
    ('00000000-0000-4000-8000-0000000d0001', '00000000-0000-4000-8000-00000000a0a0', 1500),
    ('00000000-0000-4000-8000-0000000d0001', '00000000-0000-4000-8000-00000000b0b0', 1500),
    ('00000000-0000-4000-8000-0000000d0001', '00000000-0000-4000-8000-00000000c0c0', 1500);

-- Max bought the snacks for Zoe and himself: 12.00 (groceries). Zoe paid Ada back 10.00 in
-- cash, with a note: who owes whom shows the pairs (GET …/balances?view=pairs).
INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, category, transaction_date) VALUES
    ('00000000-0000-4000-8000-0000000d0002', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000b0b0',
     'expense', 'Snacks', 1200, '00000000-0000-4000-8000-00000000b0b0', 'groceries', current_date);
INSERT INTO splits (transaction_id, user_id, amount) VALUES
    ('00000000-0000-4000-8000-0000000d0002', '00000000-0000-4000-8000-00000000b0b0', 600),
    ('00000000-0000-4000-8000-0000000d0002', '00000000-0000-4000-8000-00000000c0c0', 600);
INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, category, transaction_date, notes) VALUES
    ('00000000-0000-4000-8000-0000000d0003', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000c0c0',
     'settlement', 'Settlement (cash)', 1000, '00000000-0000-4000-8000-00000000c0c0', 'other', current_date,
     'Paid at Tuesday practice');
INSERT INTO splits (transaction_id, user_id, amount) VALUES
    ('00000000-0000-4000-8000-0000000d0003', '00000000-0000-4000-8000-00000000a0a0', 1000);
-- The team's own category (docs/money.md, "Categories"), which Zoe added: away games.
INSERT INTO expense_categories (id, community_id, name, emoji, created_by) VALUES
    ('00000000-0000-4000-8000-0000000ca701', '00000000-0000-4000-8000-0000000c0001', 'Away games', '🚌',
     '00000000-0000-4000-8000-00000000c0c0');
-- Grandpa Joe paid the gas to the away game, 20.00, for Zoe and himself (in "Away games").
INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, category, category_id,
    transaction_date) VALUES
    ('00000000-0000-4000-8000-0000000d0004', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000c0c0',
     'expense', 'Gas for the away game', 2000, '00000000-0000-4000-8000-00000000d0d0', 'other',
     '00000000-0000-4000-8000-0000000ca701', current_date);
INSERT INTO splits (transaction_id, user_id, amount) VALUES
    ('00000000-0000-4000-8000-0000000d0004', '00000000-0000-4000-8000-00000000c0c0', 1000),
    ('00000000-0000-4000-8000-0000000d0004', '00000000-0000-4000-8000-00000000d0d0', 1000);
-- An income (docs/money.md, "Income"): Ada sold last season's jerseys for 36.00, for the three of
-- them; she owes Max and Zoe 12.00 each.
INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, category, transaction_date) VALUES
    ('00000000-0000-4000-8000-0000000d0005', '00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0',
     'income', 'Sold last season''s jerseys', 3600, '00000000-0000-4000-8000-00000000a0a0', 'equipment', current_date);
INSERT INTO splits (transaction_id, user_id, amount) VALUES
    ('00000000-0000-4000-8000-0000000d0005', '00000000-0000-4000-8000-00000000a0a0', 1200),
    ('00000000-0000-4000-8000-0000000d0005', '00000000-0000-4000-8000-00000000b0b0', 1200),
    ('00000000-0000-4000-8000-0000000d0005', '00000000-0000-4000-8000-00000000c0c0', 1200);

INSERT INTO dues (id, community_id, name, amount, due_date, created_by) VALUES
    ('00000000-0000-4000-8000-0000000a0001', '00000000-0000-4000-8000-0000000c0001', 'Season dues', 5000,
     current_date + 30, '00000000-0000-4000-8000-00000000a0a0');
INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by, payment_method) VALUES
    ('00000000-0000-4000-8000-0000000a0001', '00000000-0000-4000-8000-00000000b0b0', 5000,
     '00000000-0000-4000-8000-00000000a0a0', 'cash');

-- Getting paid back (docs/money.md, "Getting paid back"): the providers an operator keeps, and
-- where each of the three is paid. Settle-up offers Max a Revolut and a PayPal.me link to pay Ada
-- his 3.00 (GET …/settle-up); in euros or crowns, the banks' QR codes; in rupees, UPI.
INSERT INTO payment_providers (id, name, icon, handle_kind, payload, link_template, handle_prefix, amount_format, currencies, regions, platforms, sort_order) VALUES
    ('revolut', 'Revolut', 'https://assets.orbitcove.example/providers/revolut.png', 'revolut', 'link',
     'https://revolut.me/{handle}?amount={amount}&currency={currency}&note={note}', 'revolut.me/', 'minor', '{}', '{}', '{}', 10),
    ('paypal_me', 'PayPal.me', 'https://assets.orbitcove.example/providers/paypal.png', 'paypal_me', 'link',
     'https://paypal.me/{handle}/{amount}{currency}', 'paypal.me/', 'decimal', '{}', '{}', '{}', 20),
    ('upi', 'UPI', 'https://assets.orbitcove.example/providers/upi.png', 'upi', 'link',
     'upi://pay?pa={handle}&pn={name}&am={amount}&cu={currency}&tn={note}', '', 'decimal', '{INR}', '{IN}', '{ios,android}', 30),
    ('sepa', 'Bank transfer (SEPA)', NULL, 'iban', 'epc_qr', NULL, '', 'decimal', '{EUR}', '{}', '{}', 40),
    ('qr_platba', 'QR Platba', NULL, 'czech_account', 'spayd', NULL, '', 'decimal', '{CZK}', '{CZ,SK}', '{}', 50);
INSERT INTO payment_handles (user_id, kind, handle, bic, holder) VALUES
    ('00000000-0000-4000-8000-00000000a0a0', 'revolut', 'adalovelace', NULL, NULL),
    ('00000000-0000-4000-8000-00000000a0a0', 'paypal_me', 'adalovelace', NULL, NULL),
    ('00000000-0000-4000-8000-00000000a0a0', 'iban', 'DE89370400440532013000', 'COBADEFFXXX', 'Ada Lovelace'),
    ('00000000-0000-4000-8000-00000000c0c0', 'upi', 'zoe@okaxis', NULL, NULL),
    ('00000000-0000-4000-8000-00000000c0c0', 'czech_account', '19-2000145399/0800', NULL, NULL),
    ('00000000-0000-4000-8000-00000000b0b0', 'text', 'Cash at Tuesday practice is fine', NULL, NULL);
-- The team reminds old debts weekly (remindOldDebts): Zoe, who owes 9.00 in all, had this week's.
INSERT INTO notifications (user_id, community_id, type, title, body, data, dedupe_key) VALUES
    ('00000000-0000-4000-8000-00000000c0c0', '00000000-0000-4000-8000-0000000c0001', 'debt_reminder', 'Tigers U10',
     'You have owed 9.00 USD for more than 14 days: settle up',
     '{"community_id": "00000000-0000-4000-8000-0000000c0001", "currency": "USD", "owed": 900, "days": 14}',
     'debt_reminder:00000000-0000-4000-8000-0000000c0001:USD:demo');
-- Ada nudged Max about his 3.00 (docs/money.md, "Who hears about money"): he was told.
INSERT INTO nudges (community_id, from_user_id, to_user_id) VALUES
    ('00000000-0000-4000-8000-0000000c0001', '00000000-0000-4000-8000-00000000a0a0', '00000000-0000-4000-8000-00000000b0b0');
INSERT INTO notifications (user_id, community_id, type, title, body, data) VALUES
    ('00000000-0000-4000-8000-00000000b0b0', '00000000-0000-4000-8000-0000000c0001', 'nudge', 'Tigers U10',
     'Ada Lovelace asks you to settle up',
     '{"community_id": "00000000-0000-4000-8000-0000000c0001", "from_user_id": "00000000-0000-4000-8000-00000000a0a0", "owed": [{"currency": "USD", "balance": 300}]}');
