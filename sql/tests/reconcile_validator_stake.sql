-- description: The stake in the newest primary-network validator snapshot agrees with the staking transactions: same node, amount and period for every validation and delegation whose transaction is in the lake, and every validation those transactions say is active on a snapshotted node is in the snapshot.
-- requires: stg_validators, stg_staking_transactions
-- The newest snapshot, found by a filter (the table's row groups outside it are skipped) rather than a
-- window over every snapshot: one is taken every run, a year of them every 15 minutes is 35,040.
with validators as (
    select *
    from stg_validators
    where subnet = 'primary'
        and snapshot_at = (select max(snapshot_at) from stg_validators where subnet = 'primary')
),

delegators as (
    select *
    from stg_validator_delegators
    where snapshot_at = (select max(snapshot_at) from stg_validator_delegators)
),

staking as (
    select *
    from stg_staking_transactions
    where subnet_id = '11111111111111111111111111111111LpoYY'
),

validations as (
    select *
    from staking
    where tx_type in ('AddValidatorTx', 'AddPermissionlessValidatorTx')
),

-- A snapshotted validator whose staking transaction is in the lake: the snapshot must say what it says.
validator_mismatches as (
    select
        'validator differs from its staking tx' as problem,
        validators.node_id,
        validators.tx_id,
        validators.weight as snapshot_stake_navax,
        validations.amount_staked_navax as staked_navax,
        validators.started_at as snapshot_started_at,
        validations.started_at as staked_from,
        validators.ends_at as snapshot_ends_at,
        validations.ended_at as staked_until
    from validators
    inner join validations
        on validators.tx_id = validations.tx_hash
    where validators.weight is distinct from validations.amount_staked_navax
        or validators.node_id is distinct from validations.node_id
        or validators.started_at is distinct from validations.started_at
        or validators.ends_at is distinct from validations.ended_at
),

delegator_mismatches as (
    select
        'delegation differs from its staking tx' as problem,
        delegators.node_id,
        delegators.tx_id,
        delegators.weight_navax as snapshot_stake_navax,
        staking.amount_staked_navax as staked_navax,
        delegators.started_at as snapshot_started_at,
        staking.started_at as staked_from,
        delegators.ends_at as snapshot_ends_at,
        staking.ended_at as staked_until
    from delegators
    inner join staking
        on delegators.tx_id = staking.tx_hash
    where delegators.weight_navax is distinct from staking.amount_staked_navax
        or delegators.node_id is distinct from staking.node_id
        or delegators.started_at is distinct from staking.started_at
        or delegators.ends_at is distinct from staking.ended_at
),

-- A validation active at the snapshot, on a node the snapshot covers, that the snapshot does not hold.
missing_validations as (
    select
        'active validation missing from the snapshot' as problem,
        validations.node_id,
        validations.tx_hash as tx_id,
        null as snapshot_stake_navax,
        validations.amount_staked_navax as staked_navax,
        null as snapshot_started_at,
        validations.started_at as staked_from,
        null as snapshot_ends_at,
        validations.ended_at as staked_until
    from validations
    cross join (select max(snapshot_at) as snapshot_at from validators) as snapshot
    where validations.started_at <= snapshot.snapshot_at
        and validations.ended_at > snapshot.snapshot_at
        and validations.node_id in (select node_id from validators)
        and validations.tx_hash not in (select tx_id from validators)
),

final as (
    select * from validator_mismatches
    union all by name
    select * from delegator_mismatches
    union all by name
    select * from missing_validations
)

select * from final
order by problem, node_id
