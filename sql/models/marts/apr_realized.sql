-- description: Realized APR of each rewarded staking period: a validator's validation (on its own stake) or a delegation, from the rewards paid.
-- unique: staking_tx_hash
-- not_null: network, staking_kind, node_id, amount_staked_navax, started_at, ended_at, staking_seconds, reward_navax, apr
-- accepted_values: staking_kind = validation | delegation
-- column: staking_tx_hash: the staking transaction (AddValidatorTx, AddDelegatorTx or their permissionless forms)
-- column: network: mainnet or fuji
-- column: staking_kind: validation (a validator's own stake, rewarded VALIDATOR) or delegation (rewarded DELEGATOR)
-- column: node_id: the validator
-- column: reward_addresses: owners of the staker's reward
-- column: amount_staked_navax: the stake, in nAVAX
-- column: started_at: start of the staking period
-- column: ended_at: end of the staking period, when the reward was paid
-- column: staking_seconds: ended_at minus started_at, in seconds
-- column: reward_navax: what the staker received for the period: the VALIDATOR reward of a validation (fees on its delegations excluded), the DELEGATOR reward (after the validator's fee) of a delegation
-- column: gross_reward_navax: the reward before the validator's fee: reward_navax for a validation; for a delegation, grossReward from stg_delegators (null when the delegation is not in the lake)
-- column: apr: realized annual rate, reward_navax / amount_staked_navax × 31,536,000 (seconds in a 365-day year) / staking_seconds, computed in integers and truncated (rounded toward zero) to 12 decimal places; 0.08 is 8 %
-- column: apr_gross: the same with gross_reward_navax
with rewards as (
    select * from stg_rewards
),

delegators as (
    select * from stg_delegators
),

periods as (
    select
        staking_tx_hash,
        any_value(network) as network,
        case any_value(reward_type) when 'VALIDATOR' then 'validation' else 'delegation' end as staking_kind,
        any_value(node_id) as node_id,
        any_value(reward_addresses) as reward_addresses,
        any_value(amount_staked_navax) as amount_staked_navax,
        any_value(started_at) as started_at,
        any_value(ended_at) as ended_at,
        sum(reward_navax) as reward_navax
    from rewards
    where reward_type in ('VALIDATOR', 'DELEGATOR')
    group by staking_tx_hash
),

measured as (
    select
        periods.*,
        cast(epoch(periods.ended_at) - epoch(periods.started_at) as bigint) as staking_seconds,
        case periods.staking_kind
            when 'validation' then periods.reward_navax
            else delegators.gross_reward_navax
        end as gross_reward_navax
    from periods
    left join delegators
        on periods.staking_tx_hash = delegators.tx_hash
        and delegators.delegation_status = 'completed'
),

final as (
    select
        staking_tx_hash,
        network,
        staking_kind,
        node_id,
        reward_addresses,
        amount_staked_navax,
        started_at,
        ended_at,
        staking_seconds,
        reward_navax,
        gross_reward_navax,
        -- Note: DuckDB divides DECIMALs as DOUBLE; integer division keeps the rate exact to its last digit.
        cast(
            (cast(reward_navax as hugeint) * 31536000 * 1000000000000)
                // (cast(amount_staked_navax as hugeint) * staking_seconds)
            as decimal(38, 0)
        ) * 0.000000000001 as apr,
        cast(
            (cast(gross_reward_navax as hugeint) * 31536000 * 1000000000000)
                // (cast(amount_staked_navax as hugeint) * staking_seconds)
            as decimal(38, 0)
        ) * 0.000000000001 as apr_gross
    from measured
    where staking_seconds > 0
        and amount_staked_navax > 0
)

select * from final
