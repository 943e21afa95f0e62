-- description: Staking rewards by reward address, validator node and UTC day of payment, with their USD value on that day where the API gives a price.
-- unique: network, reward_day, reward_address, node_id
-- optional: stg_utxos (network varchar, utxo_id varchar, created_at timestamptz)
-- not_null: network, count_rewards, reward_navax, validator_reward_navax, delegator_reward_navax, fee_reward_navax, is_priced
-- column: reward_day: UTC day the reward was paid: when its reward UTXO was created (stg_utxos.created_at), that is when the RewardValidatorTx that paid it was accepted. A VALIDATOR or DELEGATOR reward is paid at the end of its own staking period; a VALIDATOR_FEE, since the Cortina upgrade, at the end of its validator's period, days or weeks after the delegation it was earned on ended. For a reward whose UTXO the lake does not hold (its owners are not configured addresses, or the pipeline reads no UTXOs), the end of the period its RewardValidatorTx closed, from the VALIDATOR or DELEGATOR reward that transaction also paid, else the reward's own ended_at
-- column: reward_address: an owner of the reward UTXO (a reward owned by several addresses counts for each)
-- column: node_id: the validator of the staking period
-- column: network: mainnet or fuji
-- column: count_rewards: reward UTXOs paid
-- column: count_validator_rewards: VALIDATOR rewards (on the validator's own stake)
-- column: count_delegator_rewards: DELEGATOR rewards (on delegated stake, after the fee)
-- column: count_fee_rewards: VALIDATOR_FEE rewards (the validator's fee on delegations)
-- column: reward_navax: all rewards, in nAVAX
-- column: validator_reward_navax: VALIDATOR rewards, in nAVAX
-- column: delegator_reward_navax: DELEGATOR rewards, in nAVAX
-- column: fee_reward_navax: VALIDATOR_FEE rewards, in nAVAX
-- column: price_usd: USD price of AVAX on the day, as the API gives it with the rewards
-- column: reward_usd: the rewards valued at each one's USD price, summed exactly and rounded half up to the cent; null unless every reward of the row has a price
-- column: is_priced: every reward of the row has a USD price
with rewards as (
    select * from stg_rewards
),

utxos as (
    select * from stg_utxos
),

-- A RewardValidatorTx is accepted at the end of the period it closes, and pays that period's own
-- reward (VALIDATOR or DELEGATOR) beside any fees: the end of that period is when the transaction paid.
reward_txs as (
    select
        network,
        reward_tx_hash,
        min(ended_at) as paid_at
    from rewards
    where reward_type in ('VALIDATOR', 'DELEGATOR')
    group by network, reward_tx_hash
),

-- Note: ended_at is the end of the period a reward is for, not when it was paid: a validator's fee on a
-- delegation is paid at the validator's end, with the validator's own reward.
paid as (
    select
        rewards.*,
        coalesce(utxos.created_at, reward_txs.paid_at, rewards.ended_at) as paid_at
    from rewards
    left join utxos
        on rewards.network = utxos.network
        and rewards.utxo_id = utxos.utxo_id
    left join reward_txs
        on rewards.network = reward_txs.network
        and rewards.reward_tx_hash = reward_txs.reward_tx_hash
),

owned as (
    select
        -- Note: the UTC day whatever the session's TimeZone (a cast to date takes the session's day), without
        -- timezone('UTC', …)'s time-zone lookup for every row (about twenty times slower).
        cast(make_timestamp(epoch_us(paid.paid_at)) as date) as reward_day,
        unnest(paid.reward_addresses) as reward_address,
        paid.node_id,
        paid.network,
        paid.reward_type,
        paid.reward_navax,
        paid.price_usd
    from paid
),

daily as (
    select
        reward_day,
        reward_address,
        node_id,
        network,
        count(*) as count_rewards,
        count(*) filter (where reward_type = 'VALIDATOR') as count_validator_rewards,
        count(*) filter (where reward_type = 'DELEGATOR') as count_delegator_rewards,
        count(*) filter (where reward_type = 'VALIDATOR_FEE') as count_fee_rewards,
        sum(reward_navax) as reward_navax,
        coalesce(sum(reward_navax) filter (where reward_type = 'VALIDATOR'), 0) as validator_reward_navax,
        coalesce(sum(reward_navax) filter (where reward_type = 'DELEGATOR'), 0) as delegator_reward_navax,
        coalesce(sum(reward_navax) filter (where reward_type = 'VALIDATOR_FEE'), 0) as fee_reward_navax,
        max(price_usd) as price_usd,
        -- nAVAX × USD, exact: a DECIMAL product, never a division
        sum(reward_navax * price_usd) as reward_navax_usd,
        count(price_usd) = count(*) as is_priced
    from owned
    group by network, reward_day, reward_address, node_id
),

final as (
    select
        reward_day,
        reward_address,
        node_id,
        network,
        count_rewards,
        count_validator_rewards,
        count_delegator_rewards,
        count_fee_rewards,
        reward_navax,
        validator_reward_navax,
        delegator_reward_navax,
        fee_reward_navax,
        price_usd,
        case when is_priced
            then cast(round(reward_navax_usd * 0.000000001, 2) as decimal(38, 2)) end as reward_usd,
        is_priced
    from daily
)

select * from final
